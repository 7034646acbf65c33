package action_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// The second attack round, each as a hostile write collaborator does it on
// the real server, fed the Actions payloads the runs recorded. Re-running
// an old run is running the guard on that run's payload again: it is all
// a re-run hands the step.

// lowered is the body with consumed lowered (hidden consumption).
func lowered(t *testing.T, body string) string {
	return replace(t, body, "consumed: 6200", "consumed: 1000", "remaining: 13800", "remaining: 19000")
}

// A re-run of an approver's old approval run changes nothing: who removed
// permission::violation comes from the timeline, newer than the ledger.
func TestRerunOfAnApprovalIsHarmless(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	admin := f.User(t, "approver", giteatest.PermWrite)
	in := []string{"ledger-key", ledgerKey, "budget-admins", admin.Login}
	n := ledgered(t, f, "rerun")

	// A first tamper, accepted by the approver: the approval run.
	expectTampered(t, f, n, f.Run(t, f.EditBody(t, n, agent, lowered(t, f.Issue(t, n).Body)), in...))
	approval := f.RemoveLabelAs(t, n, admin, "permission::violation")
	f.Run(t, approval, in...).Expect(t, 0, "pass")

	// The agent hides consumption again, then re-runs the old approval run.
	raise := replace(t, f.Issue(t, n).Body, "total: 20000", "total: 60000", "remaining: 19000", "remaining: 59000")
	expectTampered(t, f, n, f.Run(t, f.EditBody(t, n, agent, raise), in...))
	r := f.Run(t, approval, in...)
	r.Expect(t, 1, "fail")
	if !f.Issue(t, n).Has("permission::violation") {
		t.Error("the re-run of an old approval removed nothing, but the label is gone")
	}
	// The agent removes the label itself and re-runs the approval: the
	// timeline names the agent, and the label goes back.
	f.RemoveLabelAs(t, n, agent, "permission::violation")
	r = f.Run(t, approval, in...)
	r.Expect(t, 1, "fail")
	if !f.Issue(t, n).Has("permission::violation") || !slices.ContainsFunc(r.Violations(t), func(v actiontest.Violation) bool {
		return strings.Contains(v.Message, `removed by "`+agent.Login+`"`)
	}) {
		t.Errorf("the agent's own removal, replayed as the approver's, was not put back: %v", r.Violations(t))
	}
	if got := ledgerNumbers(t, f, n); got != `"total":20000,"consumed":1000,"remaining":19000` {
		t.Errorf("the raise became the baseline: %s", got)
	}
}

// An approver's title edit is an edited event that leaves the body's
// content version alone: it never launders the agent's body edit before it.
func TestTitleEditLaundersNothing(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	admin := f.User(t, "approver", giteatest.PermWrite)
	in := []string{"ledger-key", ledgerKey, "budget-admins", admin.Login}
	n := ledgered(t, f, "title")
	f.EditBody(t, n, agent, replace(t, f.Issue(t, n).Body, "total: 20000", "total: 60000", "remaining: 13800", "remaining: 53800")) // its run replaced
	title := "a better title"
	if _, err := f.S.Dial(admin.Token).EditIssue(t.Context(), n, port.IssueEdit{Title: &title}); err != nil {
		t.Fatal(err)
	}
	d := f.Runs.Next(t, actiontest.From("issues", "edited", n, admin.Login))
	expectTampered(t, f, n, f.Run(t, d, in...), "budget.total went up 20000 → 60000")
}

// Renaming a label definition renames it on every timeline entry: the
// accepted cascade::depth-2 renamed to cascade::depth-n still limits the
// depth to 2, and the rename fails the run.
func TestLabelRenameRelaxesNothing(t *testing.T) {
	f := newFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	n := ledgered(t, f, "rename")
	id := actiontest.LabelIDs(t, f.S, f.Owner, f.Name, "cascade::depth-2")[0]
	f.API(t, agent.Token, http.MethodPatch, f.Path("/labels/%d", id), map[string]string{"name": "cascade::depth-n"}, nil)
	deep := replace(t, f.Issue(t, n).Body, "depth: 1", "depth: 3", "agent_chain: [orchestrator, lead-developer]", "agent_chain: [orchestrator, lead-developer, a, b]")
	r := f.Run(t, f.EditBody(t, n, agent, deep), "ledger-key", ledgerKey)
	expectTampered(t, f, n, r, `"cascade::depth-2" (id`, `was renamed to "cascade::depth-n"`)
	if rules := r.Rules(t); !slices.Contains(rules, "depth-exceeded") {
		t.Errorf("the renamed label relaxed the limit: %v", rules)
	}
}

// Removing the accepted cascade label does not relax the limit to
// default-max-depth: the label goes back.
func TestRemovingTheAcceptedCascadeLabel(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	in := []string{"ledger-key", ledgerKey, "default-max-depth", "n"}
	n, d := f.Open(t, "removed", example(t, "healthy.md"), governed...)
	f.Run(t, d, in...).Expect(t, 0, "pass")
	r := f.Run(t, f.RemoveLabelAs(t, n, agent, "cascade::depth-2"), in...)
	expectTampered(t, f, n, r, `accepted cascade::depth-2 label was removed by "`+agent.Login+`"`)
	if !f.Issue(t, n).Has("cascade::depth-2") {
		t.Error("the accepted cascade label was not put back")
	}
}

// Deleting an accepted entry of history_tail fails the run.
func TestErasingHistory(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	n := ledgered(t, f, "history")
	body := f.Issue(t, n).Body
	i := strings.Index(body, "    - {agent: architect")
	j := i + strings.Index(body[i:], "\n") + 1
	expectTampered(t, f, n, f.Run(t, f.EditBody(t, n, agent, body[:i]+body[j:]), "ledger-key", ledgerKey), "accepted entries vanished")
}

// The repository's owner approves with no admin-token and no
// budget-admins (the server says who owns the repository): its relaxing
// label takes effect; an agent's does not.
func TestOwnerApprovesWithoutAdminToken(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	in := []string{"ledger-key", ledgerKey, "default-max-depth", "1"}
	labels := []string{"size::medium", "phase::implementation"}
	for _, c := range []struct {
		who  actiontest.User
		code int
	}{{f.Admin(), 0}, {agent, 1}} {
		n, d := f.Open(t, "relaxed by "+c.who.Login, example(t, "healthy.md"), labels...)
		f.Run(t, d, in...).Expect(t, 0, "pass")
		r := f.Run(t, f.AddLabelsAs(t, n, c.who, "cascade::depth-3"), in...)
		if r.Code != c.code {
			t.Errorf("cascade::depth-3 added by %s: exit %d, want %d\n%s", c.who.Login, r.Code, c.code, r)
		}
	}
}

// An agent labelling its own pull request permission::evolve-system opens
// no protected path: only an approver's label does.
func TestEvolveSystemOnAnAgentsOwnPull(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	n, d := f.OpenPull(t, "agent-evolve", ".kilo/agents/reviewer.md")
	f.Run(t, d).Expect(t, 1, "fail")
	r := f.Run(t, f.addLabels(t, "pull_request_target", n, agent, "permission::evolve-system"))
	r.Expect(t, 1, "fail")
	if v := r.Violations(t); len(v) == 0 || !strings.Contains(v[0].Message, `added by "`+agent.Login+`"`) {
		t.Errorf("the agent's own evolve-system label: %v", v)
	}
}
