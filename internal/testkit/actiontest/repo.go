package actiontest

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// Repo is one fresh repository on the real server whose events record
// workflow runs (Runs captures their payloads), and the guard's own user: a collaborator with write access
// whose personal token the guard runs with. The administrator, who causes
// the tests' events, is a different user, so the guard does not skip them
// as its own.
type Repo struct {
	S           *giteatest.Server
	Owner, Name string
	Runs        *Runs
	// Bot is the guard's login and Token its personal token.
	Bot, Token string
}

// NewRepo creates the repository, its capture workflow and the guard's
// user on the package's shared server (see giteatest.Require).
func NewRepo(t testing.TB) *Repo {
	t.Helper()
	s := giteatest.Require(t)
	owner, name := s.NewRepo(t)
	return UseRepo(t, s, owner, name)
}

// UseRepo is the fixture of a repository that exists already (seeded with
// giteatest's SeedIssue, say): it adds the capture workflow and the
// guard's user.
func UseRepo(t testing.TB, s *giteatest.Server, owner, name string) *Repo {
	t.Helper()
	r := &Repo{S: s, Owner: owner, Name: name}
	r.Runs = NewRuns(t, s, owner, name)
	r.Bot, r.Token = Collaborator(t, s, owner, name, "guard", giteatest.PermWrite)
	return r
}

// Step is the guard step with the given inputs (name, value pairs).
func (r *Repo) Step(inputs ...string) Step {
	st := Step{Server: r.S, Owner: r.Owner, Repo: r.Name, Token: r.Token, Inputs: map[string]string{}, Env: map[string]string{}}
	for i := 0; i+1 < len(inputs); i += 2 {
		st.Inputs[inputs[i]] = inputs[i+1]
	}
	return st
}

// Run runs the guard binary on a delivery with the given inputs.
func (r *Repo) Run(t testing.TB, d Delivery, inputs ...string) Result {
	t.Helper()
	return r.Step(inputs...).Run(t, d)
}

// Path is an API path under the repository.
func (r *Repo) Path(format string, args ...any) string {
	return fmt.Sprintf("/repos/%s/%s", url.PathEscape(r.Owner), url.PathEscape(r.Name)) + fmt.Sprintf(format, args...)
}

// API sends a request with token, failing the test on error.
func (r *Repo) API(t testing.TB, token, method, path string, in, out any) {
	t.Helper()
	if err := API(context.Background(), r.S, token, method, path, in, out); err != nil {
		t.Fatal(err)
	}
}

// From matches a delivery by workflow event, action, issue number and
// sender.
func From(event, action string, n int64, sender string) func(Delivery) bool {
	return func(d Delivery) bool {
		return d.Event == event && d.Action == action && d.Number == n && d.Sender == sender
	}
}

// Open opens an issue as the administrator with body(n) and labels, and
// returns its number and the "opened" delivery.
func (r *Repo) Open(t testing.TB, title string, body func(n int64) string, labels ...string) (int64, Delivery) {
	t.Helper()
	n := CreateIssue(t, r.S, r.Owner, r.Name, title, body, labels...)
	return n, r.Runs.Next(t, From("issues", "opened", n, r.S.AdminLogin))
}

// OpenAs opens an issue as the user, and returns its number and the
// "opened" delivery.
func (r *Repo) OpenAs(t testing.TB, as User, title string, body func(n int64) string, labels ...string) (int64, Delivery) {
	t.Helper()
	n := CreateIssueAs(t, r.S, as.Token, r.Owner, r.Name, title, body, labels...)
	return n, r.Runs.Next(t, From("issues", "opened", n, as.Login))
}

// Comment is an issue comment as the API returns it.
type Comment struct {
	ID      int64  `json:"id"`
	Body    string `json:"body"`
	HTMLURL string `json:"html_url"`
	User    struct {
		Login string `json:"login"`
	} `json:"user"`
}

// Comments lists every comment of an issue, oldest first. The tests'
// issues are small; the guard itself never lists a whole history.
func (r *Repo) Comments(t testing.TB, n int64) []Comment {
	t.Helper()
	var cs []Comment
	r.API(t, r.S.AdminToken, http.MethodGet, r.Path("/issues/%d/comments", n), nil, &cs)
	return cs
}

// GuardComments are the guard's own comments that hold marker.
func (r *Repo) GuardComments(t testing.TB, n int64, marker string) []Comment {
	t.Helper()
	var out []Comment
	for _, c := range r.Comments(t, n) {
		if c.User.Login == r.Bot && strings.Contains(c.Body, marker) {
			out = append(out, c)
		}
	}
	return out
}

// Status returns the sticky status comment, failing unless there is
// exactly one.
func (r *Repo) Status(t testing.TB, n int64) Comment {
	t.Helper()
	cs := r.GuardComments(t, n, StatusMarker(n))
	if len(cs) != 1 {
		t.Fatalf("expected exactly one status comment on #%d, found %d", n, len(cs))
	}
	return cs[0]
}

// CommitFile writes a file to the default branch as the administrator (a
// new commit: runs of later events carry it as GITHUB_SHA), creating it or
// replacing what it held.
func (r *Repo) CommitFile(t testing.TB, path, content string) {
	t.Helper()
	var cur struct {
		SHA string `json:"sha"`
	}
	in := map[string]string{"content": base64.StdEncoding.EncodeToString([]byte(content)), "message": "Set " + path}
	method := http.MethodPost
	if err := API(context.Background(), r.S, r.S.AdminToken, http.MethodGet, r.Path("/contents/%s", path), nil, &cur); err == nil && cur.SHA != "" {
		method, in["sha"] = http.MethodPut, cur.SHA
	}
	r.API(t, r.S.AdminToken, method, r.Path("/contents/%s", path), in, nil)
}
