package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// The attacks an agent made with its write token (docs/ledger.md's
// threat model), made again in the gated posture. Each is sent twice: with
// the agent's token of the posture's scopes, and with a token of every
// scope of the same account, which shows the account itself is refused.

// attack is one request an agent makes, and the statuses Gitea answers:
// scoped with the posture's token, account with a token of every scope.
type attack struct {
	what            string
	method, path    string
	in              any
	scoped, account int
}

// scopeRefusal is how Gitea refuses a token for its scopes.
const scopeRefusal = "token does not have at least one of required scope(s)"

// refused makes each attack as the agent, asserts the statuses, and
// that the owner reads everything back unchanged afterwards.
func (fx *gatedIssue) refused(attacks ...attack) {
	t := fx.t
	t.Helper()
	before := fx.snapshot()
	for _, a := range attacks {
		scoped, body := fx.request(fx.agent.Token, a.method, a.path, a.in)
		if scoped != a.scoped || scoped == http.StatusForbidden && !strings.Contains(body, scopeRefusal) {
			t.Errorf("%s with the posture's token: HTTP %d %s; want %d, refused for its scopes", a.what, scoped, body, a.scoped)
		}
		account, body := fx.request(fx.agent.AllScopes, a.method, a.path, a.in)
		if account != a.account {
			t.Errorf("%s with a token of every scope: HTTP %d %s; want %d", a.what, account, body, a.account)
		}
		t.Logf("%s: HTTP %d with the posture's token, %d with every scope", a.what, scoped, account)
		if after := fx.snapshot(); after != before {
			t.Fatalf("after %s the owner reads\n%s\nwhere before it read\n%s", a.what, after, before)
		}
	}
}

// snapshot is what the owner reads of the repository: the issue, its
// comments, the label definitions, the Actions variables and the runs,
// as JSON.
func (fx *gatedIssue) snapshot() string {
	fx.t.Helper()
	var state struct {
		Issue struct {
			Title          string `json:"title"`
			Body           string `json:"body"`
			State          string `json:"state"`
			Locked         bool   `json:"is_locked"`
			ContentVersion int    `json:"content_version"`
			Labels         []struct {
				Name string `json:"name"`
			} `json:"labels"`
			Assignees []struct {
				Login string `json:"login"`
			} `json:"assignees"`
		}
		Comments []struct {
			ID      int64  `json:"id"`
			Body    string `json:"body"`
			Updated string `json:"updated_at"`
			User    struct {
				Login string `json:"login"`
			} `json:"user"`
		}
		Labels []struct {
			ID    int64  `json:"id"`
			Name  string `json:"name"`
			Color string `json:"color"`
		}
		Variables []struct {
			Name string `json:"name"`
			Data string `json:"data"`
		}
		Runs []giteatest.WorkflowRun
	}
	fx.must(http.MethodGet, fx.f.Path("/issues/%d", fx.n), nil, &state.Issue)
	fx.must(http.MethodGet, fx.f.Path("/issues/%d/comments", fx.n), nil, &state.Comments)
	fx.must(http.MethodGet, fx.f.Path("/labels?limit=50"), nil, &state.Labels)
	fx.must(http.MethodGet, fx.f.Path("/actions/variables?limit=50"), nil, &state.Variables)
	runs, err := fx.s.WorkflowRuns(context.Background(), fx.g.Org, fx.g.Repo)
	if err != nil {
		fx.t.Fatal(err)
	}
	state.Runs = runs
	b, err := json.MarshalIndent(state, "", "  ")
	if err != nil {
		fx.t.Fatal(err)
	}
	return string(b)
}

// body is the issue's body as the owner reads it.
func (fx *gatedIssue) body() string {
	fx.t.Helper()
	return fx.f.Issue(fx.t, fx.n).Body
}

// edited is the body with old replaced by new, failing unless old is in
// it once.
func (fx *gatedIssue) edited(old, new string) map[string]any {
	fx.t.Helper()
	b := fx.body()
	if strings.Count(b, old) != 1 {
		fx.t.Fatalf("the body holds %q %d times", old, strings.Count(b, old))
	}
	return map[string]any{"body": strings.Replace(b, old, new, 1)}
}

// labelID is the id of the repository's label name.
func (fx *gatedIssue) labelID(name string) int64 {
	fx.t.Helper()
	return actiontest.LabelIDs(fx.t, fx.s, fx.g.Org, fx.g.Repo, name)[0]
}

// TestGatedAgentCannotRewriteTheTask: the agent rewrites the body's
// ## Task section and the title. Gitea refuses both (403), and the owner
// reads the issue unchanged.
func TestGatedAgentCannotRewriteTheTask(t *testing.T) {
	fx := newGatedIssue(t)
	fx.refused(
		attack{"the ## Task section rewritten", http.MethodPatch, fx.f.Path("/issues/%d", fx.n),
			fx.edited("Rate-limit the public API per API key", "Remove the rate limits"), 403, 403},
		attack{"the title rewritten", http.MethodPatch, fx.f.Path("/issues/%d", fx.n), map[string]any{"title": "Remove the rate limits"}, 403, 403},
	)
}

// TestGatedAgentCannotEditTheCheckpoint: the agent lowers consumed,
// raises total, lowers depth. Gitea refuses each edit (403), and the
// owner reads the body unchanged.
func TestGatedAgentCannotEditTheCheckpoint(t *testing.T) {
	fx := newGatedIssue(t)
	path := fx.f.Path("/issues/%d", fx.n)
	fx.refused(
		attack{"consumed lowered", http.MethodPatch, path, fx.edited("consumed: 6200", "consumed: 200"), 403, 403},
		attack{"total raised", http.MethodPatch, path, fx.edited("total: 20000", "total: 90000"), 403, 403},
		attack{"depth lowered", http.MethodPatch, path, fx.edited("  depth: 1\n", "  depth: 0\n"), 403, 403},
	)
}

// TestGatedAgentCannotDeleteAResult: the agent deletes the result the
// gate's account posted. Gitea refuses (403); the comment stays.
func TestGatedAgentCannotDeleteAResult(t *testing.T) {
	fx := newGatedIssue(t)
	id := fx.gateResult()
	fx.refused(attack{"the gate's result deleted", http.MethodDelete, fx.f.Path("/issues/comments/%d", id), nil, 403, 403})
}

// TestGatedAgentCannotEditAnotherAccountsComment: the agent edits the
// guard's status comment and the gate's result. Gitea refuses both
// (403); both read back unchanged.
func TestGatedAgentCannotEditAnotherAccountsComment(t *testing.T) {
	fx := newGatedIssue(t)
	id := fx.gateResult()
	forged := map[string]string{"body": "all clear"}
	fx.refused(
		attack{"the guard's status comment edited", http.MethodPatch, fx.f.Path("/issues/comments/%d", fx.status), forged, 403, 403},
		attack{"the gate's result edited", http.MethodPatch, fx.f.Path("/issues/comments/%d", id), forged, 403, 403},
	)
}

// TestGatedAgentCannotChangeLabels: on an issue the owner labelled
// budget::exhausted, the agent removes it, adds cascade::depth-3,
// replaces the labels and clears them. Gitea refuses each (403); the
// labels read back the same.
func TestGatedAgentCannotChangeLabels(t *testing.T) {
	fx := newGatedIssue(t)
	exhausted, deeper := fx.labelID("budget::exhausted"), fx.labelID("cascade::depth-3")
	fx.must(http.MethodPost, fx.f.Path("/issues/%d/labels", fx.n), map[string]any{"labels": []int64{exhausted}}, nil)
	labels := fx.f.Path("/issues/%d/labels", fx.n)
	fx.refused(
		attack{"budget::exhausted removed", http.MethodDelete, fx.f.Path("/issues/%d/labels/%d", fx.n, exhausted), nil, 403, 403},
		attack{"cascade::depth-3 added", http.MethodPost, labels, map[string]any{"labels": []int64{deeper}}, 403, 403},
		attack{"the labels replaced", http.MethodPut, labels, map[string]any{"labels": []int64{deeper}}, 403, 403},
		attack{"the labels cleared", http.MethodDelete, labels, nil, 403, 403},
	)
}

// TestGatedAgentCannotRenameALabel: the agent renames the definition of
// cascade::depth-2 to cascade::depth-9, creates cascade::depth-9, and
// deletes size::medium. Gitea refuses each (403); the definitions read
// back the same.
func TestGatedAgentCannotRenameALabel(t *testing.T) {
	fx := newGatedIssue(t)
	fx.refused(
		attack{"a label renamed", http.MethodPatch, fx.f.Path("/labels/%d", fx.labelID("cascade::depth-2")),
			map[string]any{"name": "cascade::depth-9"}, 403, 403},
		attack{"a label created", http.MethodPost, fx.f.Path("/labels"), map[string]any{"name": "cascade::depth-9", "color": "#e11d21"}, 403, 403},
		attack{"a label deleted", http.MethodDelete, fx.f.Path("/labels/%d", fx.labelID("size::medium")), nil, 403, 403},
	)
}

// TestGatedAgentCannotAssignOrClose: the agent assigns the issue to the
// gate's account (which may be assigned) and closes it. Gitea refuses
// both (403); the issue reads back unassigned and open.
func TestGatedAgentCannotAssignOrClose(t *testing.T) {
	fx := newGatedIssue(t)
	path := fx.f.Path("/issues/%d", fx.n)
	fx.refused(
		attack{"the issue assigned", http.MethodPatch, path, map[string]any{"assignees": []string{fx.g.Gate.Login}}, 403, 403},
		attack{"the issue closed", http.MethodPatch, path, map[string]any{"state": "closed"}, 403, 403},
	)
}

// TestGatedAgentCannotLockOrUnlock: the agent locks the issue; the owner
// locks it; the agent unlocks it and comments on it. Gitea refuses each
// (403); the issue stays locked, with no new comment.
func TestGatedAgentCannotLockOrUnlock(t *testing.T) {
	fx := newGatedIssue(t)
	lock := fx.f.Path("/issues/%d/lock", fx.n)
	fx.refused(attack{"the issue locked", http.MethodPut, lock, map[string]any{"lock_reason": "resolved"}, 403, 403})
	fx.must(http.MethodPut, lock, map[string]any{"lock_reason": "resolved"}, nil)
	fx.refused(
		attack{"the issue unlocked", http.MethodDelete, lock, nil, 403, 403},
		attack{"a comment on the locked issue", http.MethodPost, fx.f.Path("/issues/%d/comments", fx.n), map[string]any{"body": "ready"}, 403, 403},
	)
	if !fx.f.Issue(t, fx.n).Locked {
		t.Error("the issue is not locked")
	}
}

// TestGatedAgentCannotRerunARun: the agent re-runs the run the issue's
// opening recorded, deletes it, and disables the guard's workflow. The
// agents' team has no Actions unit: Gitea refuses each (403); the runs
// read back the same.
func TestGatedAgentCannotRerunARun(t *testing.T) {
	fx := newGatedIssue(t)
	run := fx.f.Path("/actions/runs/%d", fx.opened.Run)
	fx.refused(
		attack{"a run re-run", http.MethodPost, run + "/rerun", nil, 403, 403},
		attack{"a run deleted", http.MethodDelete, run, nil, 403, 403},
		attack{"the workflow disabled", http.MethodPut, fx.f.Path("/actions/workflows/%s/disable", "gns-guard-capture.yml"), nil, 403, 403},
	)
}

// TestGatedAgentCannotWriteAnActionsVariable: the agent overwrites the
// issue's anchor, deletes it, and creates a variable. Gitea refuses each
// (403); the variables read back the same.
func TestGatedAgentCannotWriteAnActionsVariable(t *testing.T) {
	fx := newGatedIssue(t)
	anchor := fx.f.Path("/actions/variables/GNS_GUARD_ANCHOR_%d", fx.n)
	if fx.f.Variable(t, fmt.Sprintf("GNS_GUARD_ANCHOR_%d", fx.n)) == "" {
		t.Fatal("the guard wrote no anchor")
	}
	fx.refused(
		attack{"the anchor overwritten", http.MethodPut, anchor, map[string]any{"value": "forged"}, 403, 403},
		attack{"the anchor deleted", http.MethodDelete, anchor, nil, 403, 403},
		attack{"a variable created", http.MethodPost, fx.f.Path("/actions/variables/GNS_GUARD_FORGED"), map[string]any{"value": "1"}, 403, 403},
	)
}

// TestGatedAgentOpensIssuesWithoutLabels measures what the agent's
// account can still open: an issue. The posture's token is refused
// (403); a token of every scope opens it (201), and Gitea drops the
// labels and the assignee it asked for.
func TestGatedAgentOpensIssuesWithoutLabels(t *testing.T) {
	fx := newGatedIssue(t)
	in := map[string]any{"title": "A side task", "body": actiontest.Example(t, "healthy.md", fx.n+1),
		"labels": []int64{fx.labelID("cascade::depth-3")}, "assignees": []string{fx.g.Gate.Login}}
	code, body := fx.request(fx.agent.Token, http.MethodPost, fx.f.Path("/issues"), in)
	if code != http.StatusForbidden || !strings.Contains(body, scopeRefusal) {
		t.Errorf("an issue opened with the posture's token: HTTP %d %s; want 403 for its scopes", code, body)
	}
	code, body = fx.request(fx.agent.AllScopes, http.MethodPost, fx.f.Path("/issues"), in)
	if code != http.StatusCreated {
		t.Fatalf("an issue opened with a token of every scope: HTTP %d %s; want 201", code, body)
	}
	var is struct {
		Number    int64             `json:"number"`
		Labels    []json.RawMessage `json:"labels"`
		Assignees []json.RawMessage `json:"assignees"`
	}
	if err := json.Unmarshal([]byte(body), &is); err != nil {
		t.Fatal(err)
	}
	if back := fx.f.Issue(t, is.Number); len(back.Labels) != 0 || len(is.Labels) != 0 || len(is.Assignees) != 0 {
		t.Errorf("the agent's issue #%d has labels %v and %d assignee(s); Gitea drops them for a reader", is.Number, back.LabelNames(), len(is.Assignees))
	}
	t.Logf("an issue opened: HTTP 403 with the posture's token, 201 with every scope, without its labels and assignees")
}
