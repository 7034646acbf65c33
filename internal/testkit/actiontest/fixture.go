package actiontest

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// User is a user of the server with one of their tokens.
type User struct{ Login, Token string }

// Variable is the repository's Actions variable name as the owner reads
// it ("" when there is none).
func (r *Repo) Variable(t testing.TB, name string) string {
	t.Helper()
	v, err := r.Step().variable(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Guard is the guard's user, with the token it runs with.
func (r *Repo) Guard() User { return User{r.Bot, r.Token} }

// Admin is the site administrator, who opens the tests' issues: not the
// guard's user, so the guard does not skip their events.
func (r *Repo) Admin() User { return User{r.S.AdminLogin, r.S.AdminToken} }

// User creates a collaborator of the repository (see Collaborator).
func (r *Repo) User(t testing.TB, prefix string, perm giteatest.Permission) User {
	t.Helper()
	login, token := Collaborator(t, r.S, r.Owner, r.Name, prefix, perm)
	return User{login, token}
}

// Outsider creates a user with no role in the repository: on a public
// repository it may still open issues and comment on them.
func (r *Repo) Outsider(t testing.TB, prefix string) User {
	t.Helper()
	login := fmt.Sprintf("%s-%d", prefix, userSeq.Add(1))
	token, err := r.S.NewUser(context.Background(), login, false)
	if err != nil {
		t.Fatal(err)
	}
	return User{login, token}
}

// Issue is an issue as a person sees it through the API.
type Issue struct {
	Number         int64  `json:"number"`
	Title          string `json:"title"`
	Body           string `json:"body"`
	Locked         bool   `json:"is_locked"`
	Comments       int    `json:"comments"`
	ContentVersion int    `json:"content_version"`
	Labels         []struct {
		Name string `json:"name"`
	} `json:"labels"`
}

// LabelNames are the issue's labels, sorted.
func (i Issue) LabelNames() []string {
	var out []string
	for _, l := range i.Labels {
		out = append(out, l.Name)
	}
	slices.Sort(out)
	return out
}

// Has reports whether the issue has the label.
func (i Issue) Has(label string) bool { return slices.Contains(i.LabelNames(), label) }

// Issue reads issue n as the administrator.
func (r *Repo) Issue(t testing.TB, n int64) Issue {
	t.Helper()
	var is Issue
	r.API(t, r.S.AdminToken, http.MethodGet, r.Path("/issues/%d", n), nil, &is)
	return is
}

// Comment posts a comment on issue n as the user and returns its id and
// the run it recorded.
func (r *Repo) Comment(t testing.TB, n int64, as User, body string) (int64, Delivery) {
	t.Helper()
	var c Comment
	r.API(t, as.Token, http.MethodPost, r.Path("/issues/%d/comments", n), map[string]string{"body": body}, &c)
	return c.ID, r.Runs.Next(t, From("issue_comment", "created", n, as.Login))
}

// EditBody replaces issue n's body as the user and returns the run the
// edit recorded.
func (r *Repo) EditBody(t testing.TB, n int64, as User, body string) Delivery {
	t.Helper()
	r.API(t, as.Token, http.MethodPatch, r.Path("/issues/%d", n), map[string]string{"body": body}, nil)
	return r.Runs.Next(t, From("issues", "edited", n, as.Login))
}

// AddLabels adds labels (created when missing) to issue or pull request n
// as the administrator and returns the run it recorded (event issues, or
// pull_request for a pull request; action label_updated).
func (r *Repo) AddLabels(t testing.TB, event string, n int64, names ...string) Delivery {
	t.Helper()
	ids := LabelIDs(t, r.S, r.Owner, r.Name, names...)
	r.API(t, r.S.AdminToken, http.MethodPost, r.Path("/issues/%d/labels", n), map[string]any{"labels": ids}, nil)
	return r.Runs.Next(t, From(event, "label_updated", n, r.S.AdminLogin))
}

// RemoveLabel removes one label from issue n as the administrator and
// returns the run it recorded.
func (r *Repo) RemoveLabel(t testing.TB, n int64, name string) Delivery {
	t.Helper()
	id := LabelIDs(t, r.S, r.Owner, r.Name, name)[0]
	r.API(t, r.S.AdminToken, http.MethodDelete, r.Path("/issues/%d/labels/%d", n, id), nil, nil)
	return r.Runs.Next(t, From("issues", "label_updated", n, r.S.AdminLogin))
}

// RepoLabel returns a repository label's color (ok false when absent).
func (r *Repo) RepoLabel(t testing.TB, name string) (color string, ok bool) {
	t.Helper()
	var ls []struct {
		Name  string `json:"name"`
		Color string `json:"color"`
	}
	r.API(t, r.S.AdminToken, http.MethodGet, r.Path("/labels?limit=50"), nil, &ls)
	for _, l := range ls {
		if l.Name == name {
			return l.Color, true
		}
	}
	return "", false
}

// LastComments are the last k comments of issue n, as Gitea returns them.
func (r *Repo) LastComments(t testing.TB, n int64, k int) []Comment {
	t.Helper()
	cs := r.Comments(t, n)
	return cs[max(0, len(cs)-k):]
}

// The hidden markers of the guard's comments (docs/contract.md §7), written out
// here rather than taken from the guard's code.

// StatusMarker is the hidden marker of the guard's status comment.
func StatusMarker(n int64) string { return fmt.Sprintf("<!-- gns-guard:status issue=%d -->", n) }

// RecoveryMarker is the marker of the context-recovery-needed comment.
func RecoveryMarker(n int64) string { return fmt.Sprintf("<!-- gns-guard:recovery issue=%d -->", n) }

// DigestMarker is the marker of the completion digest.
func DigestMarker(n int64) string { return fmt.Sprintf("<!-- gns-guard:digest issue=%d -->", n) }

// Expect fails the test with the run's log unless it exited with code and
// set the result output.
func (r Result) Expect(t testing.TB, code int, result string) {
	t.Helper()
	if r.Code != code || r.Outputs["result"] != result {
		t.Fatalf("expected exit %d and result %q, got exit %d and result %q\n%s", code, result, r.Code, r.Outputs["result"], r.String())
	}
}

// ExpectRules fails the test unless the violations output lists exactly
// these rules, in order (none: no violation and no warning).
func (r Result) ExpectRules(t testing.TB, rules ...string) {
	t.Helper()
	if got := r.Rules(t); !slices.Equal(got, rules) {
		t.Fatalf("expected violations %v, got %v\n%s", rules, got, r.String())
	}
}

// WithIssue sets the checkpoint's issue number in a body.
func WithIssue(body string, n int64) string {
	return issueKey.ReplaceAllString(body, "${1}"+strconv.FormatInt(n, 10))
}

// AddLabelsAs adds labels (created when missing) to issue n as the user and
// returns the run it recorded.
func (r *Repo) AddLabelsAs(t testing.TB, n int64, as User, names ...string) Delivery {
	t.Helper()
	ids := LabelIDs(t, r.S, r.Owner, r.Name, names...)
	r.API(t, as.Token, http.MethodPost, r.Path("/issues/%d/labels", n), map[string]any{"labels": ids}, nil)
	return r.Runs.Next(t, From("issues", "label_updated", n, as.Login))
}

// RemoveLabelAs removes one label from issue n as the user and returns the
// run it recorded.
func (r *Repo) RemoveLabelAs(t testing.TB, n int64, as User, name string) Delivery {
	t.Helper()
	id := LabelIDs(t, r.S, r.Owner, r.Name, name)[0]
	r.API(t, as.Token, http.MethodDelete, r.Path("/issues/%d/labels/%d", n, id), nil, nil)
	return r.Runs.Next(t, From("issues", "label_updated", n, as.Login))
}

// EditComment replaces comment id's body as the user (any issue writer may
// edit anyone's comment on Gitea; the author stays) and returns the run it
// recorded on issue n.
func (r *Repo) EditComment(t testing.TB, n, id int64, as User, body string) Delivery {
	t.Helper()
	r.API(t, as.Token, http.MethodPatch, r.Path("/issues/comments/%d", id), map[string]string{"body": body}, nil)
	return r.Runs.Next(t, From("issue_comment", "edited", n, as.Login))
}

// DeleteComment deletes comment id as the user: it records no run.
func (r *Repo) DeleteComment(t testing.TB, id int64, as User) {
	t.Helper()
	r.API(t, as.Token, http.MethodDelete, r.Path("/issues/comments/%d", id), nil, nil)
}
