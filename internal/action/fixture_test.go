package action_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
)

// newFixture starts a parallel test on a repository of its own (see
// actiontest.Repo: the fixture of every action-mode test).
func newFixture(t *testing.T) *actiontest.Repo {
	t.Helper()
	t.Parallel()
	return actiontest.NewRepo(t)
}

// example is a body builder from a shipped example issue.
func example(t *testing.T, name string) func(int64) string {
	return func(n int64) string { return actiontest.Example(t, name, n) }
}

// testdata is a body builder from testdata/check.
func testdata(t *testing.T, name string) func(int64) string {
	return func(n int64) string {
		root, err := testkit.Root()
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(root, "testdata", "check", name))
		if err != nil {
			t.Fatal(err)
		}
		return actiontest.WithIssue(string(b), n)
	}
}

// replace replaces old by new in s, failing the test when old is absent.
func replace(t *testing.T, s string, pairs ...string) string {
	t.Helper()
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("the body has no %q to replace", pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

// lineOf returns the 1-based line of body that contains s, and the column
// (in characters) just after it: where a value following s starts.
func lineOf(t *testing.T, body, s string) (line, col int) {
	t.Helper()
	for i, l := range strings.Split(body, "\n") {
		if k := strings.Index(l, s); k >= 0 {
			return i + 1, len([]rune(l[:k+len(s)])) + 1
		}
	}
	t.Fatalf("the body has no line with %q", s)
	return 0, 0
}
