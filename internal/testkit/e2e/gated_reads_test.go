package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// What a read-only agent still does in the gated posture: it reads, and
// it comments, which the guard holds to be an outsider's word.

// reads is what the agent's reads give with token: each verb's exit code
// and the status of GET /user, which the gate asks to learn whose token
// it is.
func (fx *gatedIssue) reads(token string) map[string]int {
	fx.t.Helper()
	got := map[string]int{}
	for _, verb := range []string{"context", "history", "status"} {
		_, _, got[verb] = fx.gns(token, verb)
	}
	got["GET /user"], _ = fx.request(token, http.MethodGet, "/user", nil)
	return got
}

// readsWork says whether every read succeeded.
func readsWork(got map[string]int) bool {
	for what, code := range got {
		if what == "GET /user" && code != http.StatusOK || what != "GET /user" && code != 0 {
			return false
		}
	}
	return true
}

// TestGatedAgentTokenScopes measures giteatest's gated posture: the agent
// is no assignee (no writer to the guard), the gate is one; the agent's
// reads work with GatedAgentScopes and fail with any one left out;
// without Code read, context fails; its tokens mint no token.
func TestGatedAgentTokenScopes(t *testing.T) {
	fx := newGatedIssue(t)
	var assignees []struct {
		Login string `json:"login"`
	}
	fx.must(http.MethodGet, fx.f.Path("/assignees"), nil, &assignees)
	logins := make([]string, len(assignees))
	for i, a := range assignees {
		logins[i] = a.Login
	}
	if slices.Contains(logins, fx.agent.Login) || !slices.Contains(logins, fx.g.Gate.Login) {
		t.Errorf("Gitea's assignees are %v: want the gate %s and not the agent %s", logins, fx.g.Gate.Login, fx.agent.Login)
	}
	// Gitea answers a member of a team with units only "none", whatever
	// the units: the guard asks the assignees, not this.
	var perm struct {
		Permission string `json:"permission"`
	}
	fx.must(http.MethodGet, fx.f.Path("/collaborators/%s/permission", fx.agent.Login), nil, &perm)
	if perm.Permission != "none" {
		t.Errorf("the agent's permission is %q, want Gitea's none for a team with units", perm.Permission)
	}
	if got := fx.reads(fx.agent.Token); !readsWork(got) {
		t.Errorf("the agent's reads with %v: %v", giteatest.GatedAgentScopes, got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var sets [][]string
	for i := range giteatest.GatedAgentScopes {
		sets = append(sets, slices.Delete(slices.Clone(giteatest.GatedAgentScopes), i, i+1))
	}
	login := "scoped-" + fx.g.Org
	toks, err := fx.s.NewUserScoped(ctx, login, sets...)
	if err != nil {
		t.Fatal(err)
	}
	fx.must(http.MethodPut, fmt.Sprintf("/teams/%d/members/%s", fx.g.AgentsTeam, login), nil, nil)
	for i, tok := range toks {
		got := fx.reads(tok)
		if readsWork(got) {
			t.Errorf("the reads work without %s: it is not needed", giteatest.GatedAgentScopes[i])
		}
		t.Logf("without %s: %v", giteatest.GatedAgentScopes[i], got)
	}
	fx.withoutCode(ctx)
	// No token of the agent's mints a wider one: the posture's lacks the
	// scope (403), and Gitea makes tokens for a password only (401).
	in := map[string]any{"name": "wider", "scopes": []string{"all"}}
	for tok, want := range map[string]int{fx.agent.Token: http.StatusForbidden, fx.agent.AllScopes: http.StatusUnauthorized} {
		if code, body := fx.request(tok, http.MethodPost, "/users/"+fx.agent.Login+"/tokens", in); code != want {
			t.Errorf("a token made with a token: HTTP %d %s; want %d", code, body, want)
		}
	}
}

// withoutCode measures an agent whose team has Issues read and no Code:
// context cannot read the settings file.
func (fx *gatedIssue) withoutCode(ctx context.Context) {
	t := fx.t
	t.Helper()
	login := "issuesonly-" + fx.g.Org
	toks, err := fx.s.NewUserScoped(ctx, login, giteatest.GatedAgentScopes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fx.g.AddTeam(ctx, fx.s, "issues-only", map[string]string{"repo.issues": "read"}, login); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := fx.gns(toks[0], "context")
	t.Logf("context without Code read: exit %d\n%s%s", code, out, stderr)
	if code == 0 {
		t.Errorf("context works without Code read: the agents' team does not need it")
	}
}

// TestGatedAgentsCommentIsAnOutsiders: a reader may comment and edit or
// delete its own comments (Gitea's CreateIssueComment asks only to read).
// The agent posts the result report would post, as architect (agents maps
// it), and edits a comment of its own into one. Each guard run passes;
// the record counts neither, names the agent an outsider; context loads
// neither, naming both.
func TestGatedAgentsCommentIsAnOutsiders(t *testing.T) {
	fx := newGatedIssue(t)
	posted := fx.agentWrites(http.MethodPost, fx.f.Path("/issues/%d/comments", fx.n), fx.result("architect", "agent-1", "designed"), 201)
	fx.guard(fx.f.Runs.Next(t, actiontest.From("issue_comment", "created", fx.n, fx.agent.Login))).Expect(t, 0, "pass")
	own := fx.agentWrites(http.MethodPost, fx.f.Path("/issues/%d/comments", fx.n), "on it", 201)
	fx.guard(fx.f.Runs.Next(t, actiontest.From("issue_comment", "created", fx.n, fx.agent.Login))).Expect(t, 0, "pass")
	fx.agentWrites(http.MethodPatch, fx.f.Path("/issues/comments/%d", own), fx.result("architect", "agent-2", "designed"), 200)
	fx.guard(fx.f.Runs.Next(t, actiontest.From("issue_comment", "edited", fx.n, fx.agent.Login))).Expect(t, 0, "pass")

	if is := fx.f.Issue(t, fx.n); is.Has("permission::violation") {
		t.Errorf("the agent's comments set permission::violation: %v", is.LabelNames())
	}
	rec := fx.record()
	if rec.accepted(posted) || rec.accepted(own) {
		t.Errorf("the record counts %v as results; the agent's are %d and %d", rec.Results, posted, own)
	}
	// The runs read both comments: their author is in the record, an
	// outsider.
	if !slices.Contains(rec.Access.Outsiders, fx.agent.Login) || slices.Contains(rec.Access.Writers, fx.agent.Login) {
		t.Errorf("the record's writers %v and outsiders %v: want the agent %s an outsider", rec.Access.Writers, rec.Access.Outsiders, fx.agent.Login)
	}
	out, stderr, code := fx.gns(fx.agent.Token, "context")
	if code != 0 {
		t.Fatalf("context: exit %d\n%s%s", code, out, stderr)
	}
	if strings.Contains(out, "A token bucket per key") {
		t.Errorf("the entry load carries the agent's own result:\n%s", out)
	}
	for _, id := range []int64{posted, own} {
		named := "Not loaded: comment " + strconv.FormatInt(id, 10) + ` by "` + fx.agent.Login + `" (its author cannot write the issue)`
		if !strings.Contains(out, named) {
			t.Errorf("the entry load does not name comment %d as an outsider's (%q):\n%s", id, named, out)
		}
	}
	fx.agentWrites(http.MethodDelete, fx.f.Path("/issues/comments/%d", own), "", 204)
}

// agentWrites sends a request as the agent: the posture's token is
// refused for its scopes (403), a token of every scope gets want. It
// returns the id of a comment the answer holds.
func (fx *gatedIssue) agentWrites(method, path, body string, want int) int64 {
	t := fx.t
	t.Helper()
	var in any
	if body != "" {
		in = map[string]string{"body": body}
	}
	code, answer := fx.request(fx.agent.Token, method, path, in)
	if code != http.StatusForbidden || !strings.Contains(answer, scopeRefusal) {
		t.Errorf("%s %s with the posture's token: HTTP %d %s; want 403 for its scopes", method, path, code, answer)
	}
	code, answer = fx.request(fx.agent.AllScopes, method, path, in)
	if code != want {
		t.Fatalf("%s %s with a token of every scope: HTTP %d %s; want %d", method, path, code, answer, want)
	}
	t.Logf("%s %s: HTTP 403 with the posture's token, %d with every scope", method, path, code)
	var c actiontest.Comment
	if want != http.StatusNoContent {
		if err := json.Unmarshal([]byte(answer), &c); err != nil {
			t.Fatal(err)
		}
	}
	return c.ID
}
