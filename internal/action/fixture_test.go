package action_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
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

// fixture is the repository a test of action mode works on: the real
// server's (actiontest.Repo) or the fake's (fakeFixture), with the same
// people and helpers.
type fixture interface {
	Admin() actiontest.User
	Guard() actiontest.User
	Variable(t testing.TB, name string) string
	User(t testing.TB, prefix string, perm giteatest.Permission) actiontest.User
	Open(t testing.TB, title string, body func(int64) string, labels ...string) (int64, actiontest.Delivery)
	OpenAs(t testing.TB, as actiontest.User, title string, body func(int64) string, labels ...string) (int64, actiontest.Delivery)
	Issue(t testing.TB, n int64) actiontest.Issue
	Comments(t testing.TB, n int64) []actiontest.Comment
	LastComments(t testing.TB, n int64, k int) []actiontest.Comment
	GuardComments(t testing.TB, n int64, marker string) []actiontest.Comment
	Status(t testing.TB, n int64) actiontest.Comment
	Comment(t testing.TB, n int64, as actiontest.User, body string) (int64, actiontest.Delivery)
	EditComment(t testing.TB, n, id int64, as actiontest.User, body string) actiontest.Delivery
	DeleteComment(t testing.TB, id int64, as actiontest.User)
	EditBody(t testing.TB, n int64, as actiontest.User, body string) actiontest.Delivery
	AddLabels(t testing.TB, event string, n int64, names ...string) actiontest.Delivery
	AddLabelsAs(t testing.TB, n int64, as actiontest.User, names ...string) actiontest.Delivery
	RemoveLabel(t testing.TB, n int64, name string) actiontest.Delivery
	RemoveLabelAs(t testing.TB, n int64, as actiontest.User, name string) actiontest.Delivery
	Run(t testing.TB, d actiontest.Delivery, inputs ...string) actiontest.Result
}

var (
	_ fixture = (*actiontest.Repo)(nil)
	_ fixture = (*fakeFixture)(nil)
)
