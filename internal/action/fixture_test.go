package action_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/actiontest"
)

// fixture is a repository of its own with the guard's user (see
// actiontest.Repo).
type fixture struct{ *actiontest.Repo }

// newFixture starts a parallel test on a repository of its own.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	t.Parallel()
	return &fixture{actiontest.NewRepo(t)}
}

// example is a body builder from a shipped example issue.
func example(t *testing.T, name string) func(int64) string {
	return func(n int64) string { return actiontest.Example(t, name, n) }
}

var issueKey = regexp.MustCompile(`(?m)^(\s*issue:\s*)\d+`)

// withIssue sets the checkpoint's issue number in a body.
func withIssue(body string, n int64) string {
	return issueKey.ReplaceAllString(body, "${1}"+strconv.FormatInt(n, 10))
}

// testdata is a body builder from testdata/check.
func testdata(t *testing.T, name string) func(int64) string {
	return func(n int64) string {
		root, err := actiontest.Root()
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(root, "testdata", "check", name))
		if err != nil {
			t.Fatal(err)
		}
		return withIssue(string(b), n)
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

// editBody edits an issue's body as the user of token (login) and returns
// the "edited" delivery.
func (f *fixture) editBody(t *testing.T, n int64, token, login, body string) actiontest.Delivery {
	t.Helper()
	f.API(t, token, http.MethodPatch, f.Path("/issues/%d", n), map[string]string{"body": body}, nil)
	return f.Runs.Next(t, actiontest.From("issues", "edited", n, login))
}

// addLabels adds labels to an issue as the administrator and returns the
// delivery (issues/labeled, or pull_request/labeled for a pull request).
func (f *fixture) addLabels(t *testing.T, event string, n int64, names ...string) actiontest.Delivery {
	t.Helper()
	ids := actiontest.LabelIDs(t, f.S, f.Owner, f.Name, names...)
	f.API(t, f.S.AdminToken, http.MethodPost, f.Path("/issues/%d/labels", n), map[string]any{"labels": ids}, nil)
	return f.Runs.Next(t, actiontest.From(event, "label_updated", n, f.S.AdminLogin))
}

// removeLabel removes one label from an issue as the administrator.
func (f *fixture) removeLabel(t *testing.T, n int64, name string) actiontest.Delivery {
	t.Helper()
	id := actiontest.LabelIDs(t, f.S, f.Owner, f.Name, name)[0]
	f.API(t, f.S.AdminToken, http.MethodDelete, f.Path("/issues/%d/labels/%d", n, id), nil, nil)
	return f.Runs.Next(t, actiontest.From("issues", "label_updated", n, f.S.AdminLogin))
}

// comment posts a comment as the user of token (login) and returns its id
// and the delivery.
func (f *fixture) comment(t *testing.T, n int64, token, login, body string) (int64, actiontest.Delivery) {
	t.Helper()
	var c struct {
		ID int64 `json:"id"`
	}
	f.API(t, token, http.MethodPost, f.Path("/issues/%d/comments", n), map[string]string{"body": body}, &c)
	return c.ID, f.Runs.Next(t, actiontest.From("issue_comment", "created", n, login))
}

// issueState is what a person sees of an issue.
type issueState struct {
	Title  string `json:"title"`
	Body   string `json:"body"`
	Locked bool   `json:"is_locked"`
	Labels []struct {
		Name string `json:"name"`
	} `json:"labels"`
	Comments int `json:"comments"`
}

func (s issueState) labels() []string {
	var out []string
	for _, l := range s.Labels {
		out = append(out, l.Name)
	}
	slices.Sort(out)
	return out
}

func (s issueState) has(label string) bool { return slices.Contains(s.labels(), label) }

func (f *fixture) issue(t *testing.T, n int64) issueState {
	t.Helper()
	var s issueState
	f.API(t, f.S.AdminToken, http.MethodGet, f.Path("/issues/%d", n), nil, &s)
	return s
}

func recoveryMarker(n int64) string { return fmt.Sprintf("<!-- gns-guard:recovery issue=%d -->", n) }

// repoLabel returns a repository label by name (ok false when absent).
func (f *fixture) repoLabel(t *testing.T, name string) (color string, ok bool) {
	t.Helper()
	var ls []struct {
		Name  string `json:"name"`
		Color string `json:"color"`
	}
	f.API(t, f.S.AdminToken, http.MethodGet, f.Path("/labels?limit=50"), nil, &ls)
	for _, l := range ls {
		if l.Name == name {
			return l.Color, true
		}
	}
	return "", false
}

// expect fails the test with the run's log unless the exit code and the
// result output are as given.
func expect(t *testing.T, r actiontest.Result, code int, result string) {
	t.Helper()
	if r.Code != code || r.Outputs["result"] != result {
		t.Fatalf("expected exit %d and result %q, got exit %d and result %q\n%s", code, result, r.Code, r.Outputs["result"], r.String())
	}
}

// expectRules fails unless the violations are exactly these rules.
func expectRules(t *testing.T, r actiontest.Result, want ...string) {
	t.Helper()
	got := r.Rules(t)
	if !slices.Equal(got, want) {
		t.Fatalf("expected violations %v, got %v\n%s", want, got, r.String())
	}
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

// payload decodes a delivery's payload.
func payload(t *testing.T, d actiontest.Delivery) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(d.Payload, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
