package action_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// The third attack round (approvals bound to a state, every label by id,
// accepted limits, anchored issues, re-runs), each as a hostile write
// collaborator does it on the real server, fed the Actions payloads the
// runs recorded.

// renameLabel renames a label definition as the user (any write
// collaborator may).
func renameLabel(t *testing.T, f *actiontest.Repo, as actiontest.User, from, to string) {
	t.Helper()
	id := actiontest.LabelIDs(t, f.S, f.Owner, f.Name, from)[0]
	f.API(t, as.Token, http.MethodPatch, f.Path("/labels/%d", id), map[string]string{"name": to}, nil)
}

// findingSays reports whether a finding of the run says all of says.
func findingSays(t *testing.T, r actiontest.Result, says ...string) bool {
	t.Helper()
	return slices.ContainsFunc(r.Violations(t), func(v actiontest.Violation) bool {
		for _, s := range says {
			if !strings.Contains(v.Message, s) {
				return false
			}
		}
		return true
	})
}

// Attack 1: the owner accepted size::small; the agent inflates the
// estimate so that the size it infers is large, and adds size::large. The
// accepted size label is the limit: the inferred size relaxes nothing.
func TestInflatedEstimateRelaxesNoSize(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	small := func(n int64) string {
		return replace(t, actiontest.Example(t, "healthy.md", n), "total: 20000", "total: 60000", "remaining: 13800", "remaining: 53800",
			"next_estimated_tokens: 3500", "next_estimated_tokens: 2500", "size::medium", "size::small")
	}
	n, d := f.Open(t, "inflated", small, "cascade::depth-2", "size::small")
	f.Run(t, d, "ledger-key", ledgerKey).Expect(t, 0, "pass")
	f.EditBody(t, n, agent, replace(t, f.Issue(t, n).Body, "next_estimated_tokens: 2500", "next_estimated_tokens: 10000")) // its run replaced
	r := f.Run(t, f.AddLabelsAs(t, n, agent, "size::large"), "ledger-key", ledgerKey)
	expectTampered(t, f, n, r, "size::large label relaxes a rule", `added by "`+agent.Login+`"`)
	if f.Issue(t, n).Has("size::large") || !strings.Contains(f.Status(t, n).Body, `"size":"small"`) {
		t.Errorf("the agent's size::large took effect:\n%s", f.Status(t, n).Body)
	}
}

// Attack 2: the owner adds an ordinary label; the agent renames its
// definition to size::large. The record holds every label by id: the
// rename is a rename, judged by the accepted name.
func TestOrdinaryLabelRenamedIntoSize(t *testing.T) {
	f := newFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	n := ledgered(t, f, "renamed into size")
	f.Run(t, f.AddLabels(t, "issues", n, "phase::review"), "ledger-key", ledgerKey).Expect(t, 0, "pass")
	renameLabel(t, f, agent, "phase::review", "size::large")
	_, d := f.Comment(t, n, agent, "carrying on")
	r := f.Run(t, d, "ledger-key", ledgerKey)
	expectTampered(t, f, n, r, `"phase::review" (id`, `renamed to "size::large"`)
}

// Attack 3: the owner approves a raise by removing permission::violation;
// the agent edits the total again one second later, before the
// approval's run reads the issue. The approval accepts the state flagged
// only: the later edit is judged anew.
func TestApprovalBindsTheStateFlagged(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	n := ledgered(t, f, "bound approval")
	raise := replace(t, f.Issue(t, n).Body, "total: 20000", "total: 60000", "remaining: 13800", "remaining: 53800")
	expectTampered(t, f, n, f.Run(t, f.EditBody(t, n, agent, raise), "ledger-key", ledgerKey), "budget.total went up 20000 → 60000")
	approval := f.RemoveLabelAs(t, n, f.Admin(), "permission::violation")
	later := replace(t, f.Issue(t, n).Body, "total: 60000", "total: 900000", "remaining: 53800", "remaining: 893800")
	f.EditBody(t, n, agent, later) // its run comes after the approval's
	r := f.Run(t, approval, "ledger-key", ledgerKey)
	expectTampered(t, f, n, r)
	if !findingSays(t, r, "budget.total went up 20000 → 900000") || !findingSays(t, r, "removed by", "an approver", "changed after the guard flagged it") {
		t.Errorf("the finding does not name the edit after the flag: %v", r.Violations(t))
	}
	if !f.Issue(t, n).Has("permission::violation") {
		t.Error("permission::violation was not put back")
	}
	if got := ledgerNumbers(t, f, n); got != `"total":20000,"consumed":6200,"remaining":13800` {
		t.Errorf("the later edit became the baseline: %s", got)
	}
	// The approver, having seen the new state flagged, approves it.
	r = f.Run(t, f.RemoveLabelAs(t, n, f.Admin(), "permission::violation"), "ledger-key", ledgerKey)
	r.Expect(t, 0, "pass")
	if got := ledgerNumbers(t, f, n); got != `"total":900000,"consumed":6200,"remaining":893800` {
		t.Errorf("the approved state is not the baseline: %s", got)
	}
}

// Attack 4: the same through max-budget: the owner approves 120,000 over
// max-budget 100,000, the agent's 900,000 follows before the approval's
// run.
func TestOverCapApprovalBindsTheStateFlagged(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	in := []string{"ledger-key", ledgerKey, "max-budget", "100000"}
	over := func(n int64) string {
		return replace(t, actiontest.Example(t, "healthy.md", n), "total: 20000", "total: 120000", "remaining: 13800", "remaining: 113800")
	}
	n, d := f.Open(t, "over cap", over, governed...)
	f.Run(t, d, in...).Expect(t, 1, "fail")
	approval := f.RemoveLabelAs(t, n, f.Admin(), "budget::exhausted")
	f.EditBody(t, n, agent, replace(t, f.Issue(t, n).Body, "total: 120000", "total: 900000", "remaining: 113800", "remaining: 893800"))
	r := f.Run(t, approval, in...)
	r.Expect(t, 1, "fail")
	if rules := r.Rules(t); !slices.Contains(rules, "budget-over-cap") || !findingSays(t, r, "budget::exhausted label was removed by", "changed after the guard flagged it") {
		t.Errorf("the edit after the over-cap flag was not judged anew: %v %v", rules, r.Violations(t))
	}
	if st := f.Status(t, n).Body; !f.Issue(t, n).Has("budget::exhausted") || strings.Contains(st, `"baseline":true`) {
		t.Errorf("900,000 was adopted, or budget::exhausted not put back:\n%s", st)
	}
}

// Attack 5: on an anchored issue the agent deletes the checkpoint block
// and the cascade and size labels: the issue stays governed, and that is
// tampering.
func TestAnchoredIssueStaysGoverned(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	n, _ := anchoredIssue(t, f, "stays governed")
	f.RemoveLabelAs(t, n, agent, "cascade::depth-2")
	f.RemoveLabelAs(t, n, agent, "size::medium")
	d := f.EditBody(t, n, agent, "Nothing to see here.")
	r := f.Run(t, d, anchoredInputs(f)...)
	expectTampered(t, f, n, r)
	if !findingSays(t, r, "checkpoint block the guard accepted", "is gone") {
		t.Errorf("the deleted checkpoint is not named: %v", r.Violations(t))
	}
	if is := f.Issue(t, n); !is.Has("cascade::depth-2") || !is.Has("size::medium") || !is.Has("permission::violation") {
		t.Errorf("the accepted labels were not put back: %v", is.LabelNames())
	}
}

// Attack 6: with a personal token, the agent raises the budget and
// re-runs a run the guard's own user caused: a re-run is judged.
func TestRerunOfTheGuardsOwnRunIsJudged(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	n, d := f.Open(t, "own rerun", example(t, "depth-exceeded.md"), "cascade::depth-2", "size::medium")
	f.Run(t, d, "ledger-key", ledgerKey).Expect(t, 1, "fail")
	own := f.Runs.Next(t, actiontest.From("issues", "label_updated", n, f.Bot))
	raised := replace(t, f.Issue(t, n).Body, "total: 20000", "total: 90000", "remaining: 13800", "remaining: 83800")
	f.EditBody(t, n, agent, raised) // its run cancelled
	st := f.Step("ledger-key", ledgerKey)
	st.Env["GITHUB_RUN_ATTEMPT"] = "2"
	expectTampered(t, f, n, st.Run(t, own), "budget.total went up 20000 → 90000")
}

// Attack 7: on a pull request, the owner's ordinary label renamed by the
// agent to permission::evolve-system approves nothing: the pull request's
// record holds its labels by id.
func TestRenamedLabelOpensNoProtectedPath(t *testing.T) {
	f := newFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	n, d := openPull(t, f, "renamed-evolve", ".kilo/agents/reviewer.md")
	f.Run(t, d).Expect(t, 1, "fail")
	f.Run(t, f.AddLabels(t, "pull_request_target", n, "needs-review")).Expect(t, 1, "fail")
	renameLabel(t, f, agent, "needs-review", "permission::evolve-system")
	r := f.Run(t, d)
	r.Expect(t, 1, "fail")
	if rules := r.Rules(t); !slices.Contains(rules, "protected-path") || !findingSays(t, r, `"needs-review" (id`, `renamed to "permission::evolve-system"`) {
		t.Errorf("the renamed label opened the protected path: %v %v", rules, r.Violations(t))
	}
}

// Attack 8: the pending approval label swapped by renames: the agent
// renames permission::violation away, renames an ordinary label the
// owner once removed to permission::violation, and removes the old one.
// The pending label is judged by its id.
func TestPendingLabelSwappedByRenames(t *testing.T) {
	f := newFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	n := ledgered(t, f, "swapped")
	raise := replace(t, f.Issue(t, n).Body, "total: 20000", "total: 60000", "remaining: 13800", "remaining: 53800")
	expectTampered(t, f, n, f.Run(t, f.EditBody(t, n, agent, raise), "ledger-key", ledgerKey))
	f.AddLabels(t, "issues", n, "triage")
	f.RemoveLabel(t, n, "triage")
	renameLabel(t, f, agent, "permission::violation", "permission::violation-old")
	renameLabel(t, f, agent, "triage", "permission::violation")
	r := f.Run(t, f.RemoveLabelAs(t, n, agent, "permission::violation-old"), "ledger-key", ledgerKey)
	expectTampered(t, f, n, r, `removed by "`+agent.Login+`"`)
	if got := ledgerNumbers(t, f, n); got != `"total":20000,"consumed":6200,"remaining":13800` {
		t.Errorf("the swap approved the raise: %s", got)
	}
}

// The new checks cost no request on a clean pass: the flag is computed
// from what the run read, the labels' ids come with the issue, the anchor
// and the run attempt with the runner's environment. An anchored clean
// pass stays at two requests — with ordinary labels in the record, with an
// approval waiting on a bound state, and on a re-run.
func TestBoundChecksCostNoRequest(t *testing.T) {
	f := newFakeFixture(t)
	n, d := anchoredIssue(t, f, "cost")
	f.Run(t, f.AddLabels(t, "issues", n, "phase::review"), anchoredInputs(f)...).Expect(t, 0, "pass")
	st := f.Step(anchoredInputs(f)...)
	st.Env["GITHUB_RUN_ATTEMPT"] = "2"
	r := st.Run(t, d)
	r.Expect(t, 0, "pass")
	if r.Requests != 2 || len(r.Writes) != 0 {
		t.Errorf("a re-run's clean pass made %d requests and wrote %q; want 2 and nothing\n%s", r.Requests, r.Writes, r.String())
	}
	over := func(n int64) string {
		return replace(t, actiontest.Example(t, "healthy.md", n), "total: 20000", "total: 120000", "remaining: 13800", "remaining: 113800")
	}
	in := anchoredInputs(f, "max-budget", "100000")
	m, dm := f.Open(t, "waiting", over, governed...)
	f.Run(t, dm, in...).Expect(t, 1, "fail")
	r = f.Run(t, dm, in...)
	r.Expect(t, 1, "fail")
	if r.Requests != 2 || len(r.Writes) != 0 || !strings.Contains(f.Status(t, m).Body, `"flag":{`) {
		t.Errorf("a pass on an issue waiting for an approval made %d requests and wrote %q; want 2 and nothing\n%s", r.Requests, r.Writes, r.String())
	}
}
