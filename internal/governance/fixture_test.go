package governance_test

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gns-guard/gns-guard/internal/actiontest"
	"github.com/gns-guard/gns-guard/internal/giteatest"
)

// fixture is a repository of its own with the guard's user (see
// actiontest.Repo) and an agent user who posts results. The administrator
// opens and edits the issues, so the guard never skips an event as its own.
type fixture struct {
	*actiontest.Repo
	agent, agentTok string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	t.Parallel()
	f := &fixture{Repo: actiontest.NewRepo(t)}
	f.agent, f.agentTok = actiontest.Collaborator(t, f.S, f.Owner, f.Name, "agent", giteatest.PermWrite)
	return f
}

// open opens an issue as the administrator; it returns the number and the
// "opened" delivery.
func (f *fixture) open(t *testing.T, body func(n int64) string, labels ...string) (int64, actiontest.Delivery) {
	t.Helper()
	return f.Open(t, t.Name(), body, labels...)
}

// comment posts a comment as the agent and returns its id and delivery.
func (f *fixture) comment(t *testing.T, n int64, body string) (int64, actiontest.Delivery) {
	t.Helper()
	var c struct {
		ID int64 `json:"id"`
	}
	f.API(t, f.agentTok, http.MethodPost, f.Path("/issues/%d/comments", n), map[string]string{"body": body}, &c)
	return c.ID, f.Runs.Next(t, actiontest.From("issue_comment", "created", n, f.agent))
}

// editBody replaces the body as the administrator and returns the delivery.
func (f *fixture) editBody(t *testing.T, n int64, body string) actiontest.Delivery {
	t.Helper()
	f.API(t, f.S.AdminToken, http.MethodPatch, f.Path("/issues/%d", n), map[string]string{"body": body}, nil)
	return f.Runs.Next(t, actiontest.From("issues", "edited", n, f.S.AdminLogin))
}

type issue struct {
	Body   string `json:"body"`
	Locked bool   `json:"is_locked"`
	Labels []struct {
		Name string `json:"name"`
	} `json:"labels"`
}

func (i issue) has(label string) bool {
	return slices.ContainsFunc(i.Labels, func(l struct {
		Name string `json:"name"`
	}) bool {
		return l.Name == label
	})
}

func (f *fixture) issue(t *testing.T, n int64) issue {
	t.Helper()
	var i issue
	f.API(t, f.S.AdminToken, http.MethodGet, f.Path("/issues/%d", n), nil, &i)
	return i
}

// comment is an issue comment as the API returns it.
type comment = actiontest.Comment

// lastThree are the last three comments of the issue, as Gitea returns them.
func (f *fixture) lastThree(t *testing.T, n int64) []comment {
	t.Helper()
	cs := f.Comments(t, n)
	return cs[max(0, len(cs)-3):]
}

func digestMarker(n int64) string { return fmt.Sprintf("<!-- gns-guard:digest issue=%d -->", n) }

// expect fails the test unless the run exited with code, set result, and
// found exactly the violations of rules.
func expect(t *testing.T, r actiontest.Result, code int, result string, rs ...string) {
	t.Helper()
	if got := r.Rules(t); r.Code != code || r.Outputs["result"] != result || !slices.Equal(got, rs) {
		t.Fatalf("expected exit %d, result %q, violations %v; got exit %d, result %q, violations %v\n%s",
			code, result, rs, r.Code, r.Outputs["result"], got, r.String())
	}
}

// counted caches what `gns-guard tokens` printed for a text.
var counted sync.Map

// tokens is what the real binary's `gns-guard tokens FILE` prints for text.
func tokens(t *testing.T, text string) int {
	t.Helper()
	if v, ok := counted.Load(text); ok {
		return v.(int)
	}
	file := filepath.Join(t.TempDir(), "text")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(actiontest.Binary(t), "tokens", file).Output()
	if err != nil {
		t.Fatalf("gns-guard tokens: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("gns-guard tokens printed %q", out)
	}
	counted.Store(text, n)
	return n
}

// fenced matches the checkpoint block of the tests' bodies: the lines
// between the ```yaml fence and its closing fence.
var fenced = regexp.MustCompile("(?s)```yaml\n(checkpoint:\n.*?\n)```")

// block returns the checkpoint block of a body (its YAML lines, each with
// its newline, without the fence lines).
func block(t *testing.T, body string) string {
	t.Helper()
	m := fenced.FindAllStringSubmatch(body, -1)
	if len(m) != 1 {
		t.Fatalf("expected one ```yaml checkpoint block in the body, found %d:\n%s", len(m), body)
	}
	return m[0][1]
}

var nextEstimate = regexp.MustCompile(`(?m)^\s*next_estimated_tokens:\s*(\d+)\s*$`)

// thousands formats n as the status comment does: 12,345.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// readLines returns a file's lines.
func readLines(t *testing.T, name string) []string {
	t.Helper()
	fh, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []string
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
