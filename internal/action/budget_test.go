package action_test

import (
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// budget-exhausted sets budget::exhausted, and the label keeps failing the
// issue after the budget is raised: only a person removes it, and that
// removal is the approval.
func TestBudgetExhaustedStaysUntilAPersonRemovesTheLabel(t *testing.T) {
	f := newFakeFixture(t)
	labels := []string{"cascade::depth-2", "size::medium", "phase::implementation"}
	spent := func(n int64) string {
		return replace(t, example(t, "healthy.md")(n), "consumed: 6200", "consumed: 20000", "remaining: 13800", "remaining: 0")
	}
	n, d := f.Open(t, "spent", spent, labels...)
	r := f.Run(t, d)
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "budget-exhausted")
	if v := r.Violations(t)[0]; v.KeyPath != "checkpoint.budget.remaining" || !strings.Contains(v.Message, "20000 of 20000 tokens consumed, 0 remaining") {
		t.Errorf("violation %+v", v)
	}
	if !f.Issue(t, n).Has("budget::exhausted") {
		t.Fatalf("budget::exhausted was not set\n%s", r.String())
	}
	if r.Outputs["budget-remaining"] != "0" || r.Outputs["pruned"] != "false" {
		t.Errorf("budget-remaining %q, pruned %q (an exhausted budget is not reset by pruning)", r.Outputs["budget-remaining"], r.Outputs["pruned"])
	}

	// A budget admin raises the total: the violation is gone, the label is not.
	raised := replace(t, f.Issue(t, n).Body, "total: 20000", "total: 30000", "remaining: 0", "remaining: 10000")
	d = f.EditBody(t, n, f.Admin(), raised)
	r = f.Run(t, d, "budget-admins", f.Admin().Login)
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "budget-exhausted")
	if v := r.Violations(t)[0]; !strings.Contains(v.Message, "budget::exhausted label is set") {
		t.Errorf("the label, not the numbers, fails the issue now: %+v", v)
	}
	if !f.Issue(t, n).Has("budget::exhausted") {
		t.Fatal("the guard removed budget::exhausted; only a person may")
	}

	// A person removes it: approved.
	d = f.RemoveLabel(t, n, "budget::exhausted")
	r = f.Run(t, d, "budget-admins", f.Admin().Login)
	r.Expect(t, 0, "pass")
	if st := f.Status(t, n); !strings.Contains(st.Body, "all clear") {
		t.Errorf("the status comment is not resolved:\n%s", st.Body)
	}
}

// next-over-budget rejects a next call estimated at more than half of what
// remains; it sets no label.
func TestNextOverBudget(t *testing.T) {
	f := newFakeFixture(t)
	greedy := func(n int64) string {
		return replace(t, example(t, "healthy.md")(n), "consumed: 6200", "consumed: 14000", "remaining: 13800", "remaining: 6000")
	}
	n, d := f.Open(t, "greedy", greedy, "cascade::depth-2", "size::medium", "phase::implementation")
	line, col := lineOf(t, f.Issue(t, n).Body, "next_estimated_tokens: ")
	r := f.Run(t, d)
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "next-over-budget")
	v := r.Violations(t)[0]
	if v.Line != line || v.Col != col || !strings.Contains(v.Message, "3500 tokens, more than half of the 6000 remaining (limit 3000)") {
		t.Errorf("violation %+v, expected at %d:%d", v, line, col)
	}
	st := f.Issue(t, n)
	if strings.Join(st.LabelNames(), ",") != "cascade::depth-2,phase::implementation,size::medium" || st.Locked {
		t.Errorf("next-over-budget changed labels or lock: %v, locked %v", st.LabelNames(), st.Locked)
	}
	if !strings.Contains(f.Status(t, n).Body, "next-over-budget") {
		t.Error("the status comment does not name next-over-budget")
	}
}

// agent-not-allowed: an agent outside allowed-agents sets
// permission::violation and locks the issue (with the admin-token).
func TestAgentNotAllowed(t *testing.T) {
	f := newFakeFixture(t)
	n, d := f.Open(t, "stranger", example(t, "healthy.md"), "cascade::depth-2", "size::medium", "phase::implementation")
	line, col := lineOf(t, f.Issue(t, n).Body, "next_agent: ")
	allowed := "orchestrator, lead-developer\narchitect"
	r := f.Run(t, d, "allowed-agents", allowed, "admin-token", f.Admin().Token)
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "agent-not-allowed")
	v := r.Violations(t)[0]
	if v.KeyPath != "checkpoint.next_agent" || v.Line != line || v.Col != col || !strings.Contains(v.Message, `"code-reviewer"`) {
		t.Errorf("violation %+v, expected checkpoint.next_agent at %d:%d naming code-reviewer", v, line, col)
	}
	st := f.Issue(t, n)
	if !st.Has("permission::violation") || !st.Locked {
		t.Errorf("labels %v, locked %v", st.LabelNames(), st.Locked)
	}
	// With the agent allowed the check passes, but permission::violation
	// stays and keeps failing every run: only an approver removes it.
	r = f.Run(t, d, "allowed-agents", allowed+",code-reviewer", "admin-token", f.Admin().Token)
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "permission-violation")
	if !f.Issue(t, n).Has("permission::violation") {
		t.Error("the guard removed permission::violation; only a person may")
	}
	// The repository's admin removes it (admin-token lets the guard check
	// who they are): approved.
	d = f.RemoveLabel(t, n, "permission::violation")
	r = f.Run(t, d, "allowed-agents", allowed+",code-reviewer", "admin-token", f.Admin().Token)
	r.Expect(t, 0, "pass")
	if f.Issue(t, n).Has("permission::violation") {
		t.Error("an approver's removal was undone")
	}
}

// checkpoint-tampered: lowering consumed in an edit is tampering, judged
// against the guard's ledger (the Actions payload of an edit carries no
// previous body), unless the editor is a budget admin.
func TestCheckpointTampered(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	labels := []string{"cascade::depth-2", "size::medium", "phase::implementation"}
	lower := func(body string) string {
		return replace(t, body, "consumed: 6200", "consumed: 1000", "remaining: 13800", "remaining: 19000")
	}

	n, d := f.Open(t, "tampered", example(t, "healthy.md"), labels...)
	f.Run(t, d).Expect(t, 0, "pass") // the ledger: the state as opened
	d = f.EditBody(t, n, agent, lower(f.Issue(t, n).Body))
	r := f.Run(t, d)
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "checkpoint-tampered")
	v := r.Violations(t)[0]
	line, col := lineOf(t, f.Issue(t, n).Body, "consumed: ")
	if v.Line != line || v.Col != col || !strings.Contains(v.Message, "budget.consumed went down 6200 → 1000") || !strings.Contains(v.Message, "budget.remaining went up 13800 → 19000") || !strings.Contains(v.Message, "names \""+agent.Login+"\" as the editor") {
		t.Errorf("violation %+v, expected at %d:%d", v, line, col)
	}
	if !f.Issue(t, n).Has("permission::violation") {
		t.Error("permission::violation was not set")
	}

	// The same edit by a budget admin fails too (the event's sender proves
	// nothing: any writer can re-run an old run); the admin accepts it by
	// removing permission::violation, which the timeline shows.
	admins := []string{"budget-admins", "alice," + agent.Login}
	n2, d := f.Open(t, "approved", example(t, "healthy.md"), labels...)
	f.Run(t, d).Expect(t, 0, "pass")
	d = f.EditBody(t, n2, agent, lower(f.Issue(t, n2).Body))
	f.Run(t, d, admins...).Expect(t, 1, "fail")
	d = f.RemoveLabelAs(t, n2, agent, "permission::violation")
	f.Run(t, d, admins...).Expect(t, 0, "pass")
	if st := f.Issue(t, n2); st.Has("permission::violation") {
		t.Errorf("the budget admin's approval did not stand: labels %v", st.LabelNames())
	}
	_, d = f.Comment(t, n2, agent, "Thanks.")
	f.Run(t, d, admins...).Expect(t, 0, "pass")
}
