package action_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// ledgerKey is the ledger-key input of these tests: a repository secret
// the agents cannot read.
const ledgerKey = "4e1781244fd55747e1565d53b7818bf1d42bfb67088942e3e33b2c940bf6ff3d" // 256 bits, as gns-guard keygen makes them

// governed are the labels of the tests' issues.
var governed = []string{"cascade::depth-2", "size::medium", "phase::implementation"}

// ledgered opens a healthy issue and runs the guard on its opening: the
// state as opened becomes the ledger's baseline.
func ledgered(t *testing.T, f fixture, title string) int64 {
	t.Helper()
	n, d := f.Open(t, title, example(t, "healthy.md"), governed...)
	r := f.Run(t, d, "ledger-key", ledgerKey)
	r.Expect(t, 0, "pass")
	if st := f.Status(t, n).Body; !strings.Contains(st, "<!-- gns-guard:ledger v2 {") || !strings.Contains(st, "signed with ledger-key") {
		t.Fatalf("the first run left no signed ledger:\n%s", st)
	}
	return n
}

// ledgerNumbers reads the budget the ledger in the status comment holds.
func ledgerNumbers(t *testing.T, f fixture, n int64) string {
	t.Helper()
	m := regexp.MustCompile(`"total":\d+,"consumed":\d+,"remaining":\d+`).FindString(f.Status(t, n).Body)
	if m == "" {
		t.Fatalf("no ledger numbers in the status comment:\n%s", f.Status(t, n).Body)
	}
	return m
}

// expectTampered asserts a failed run that names checkpoint-tampered and
// left permission::violation on the issue.
func expectTampered(t *testing.T, f fixture, n int64, r actiontest.Result, says ...string) {
	t.Helper()
	r.Expect(t, 1, "fail")
	var msg string
	for _, v := range r.Violations(t) {
		if v.Rule == "checkpoint-tampered" {
			msg = v.Message
		}
	}
	if msg == "" {
		t.Fatalf("no checkpoint-tampered finding: %v\n%s", r.Rules(t), r.String())
	}
	for _, s := range says {
		if !strings.Contains(msg, s) {
			t.Errorf("the finding does not say %q: %s", s, msg)
		}
	}
	if !f.Issue(t, n).Has("permission::violation") {
		t.Error("permission::violation was not set")
	}
}

// TestTamperMatrix: each way of raising a budget or hiding consumption,
// made (a) in the edit whose run the guard sees, (b) in an edit followed by
// a second edit whose run is the only one that runs (the first was replaced
// in the concurrency group), (c) followed only by a comment, and (d) after
// progress the guard accepted. Every run is fed the payload the runner
// would hand it: an edit's carries no previous body, so only the ledger
// can tell.
func TestTamperMatrix(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	kinds := []struct {
		name  string
		edit  []string // on the body as opened (consumed 6200 of 20000)
		after []string // on the body after the accepted progress (consumed 10000)
		says  string
	}{
		{"consumed lowered", []string{"consumed: 6200", "consumed: 1000", "remaining: 13800", "remaining: 19000"},
			[]string{"consumed: 10000", "consumed: 8000", "remaining: 10000", "remaining: 12000"}, "budget.consumed went down"},
		{"total raised", []string{"total: 20000", "total: 40000", "remaining: 13800", "remaining: 33800"},
			[]string{"total: 20000", "total: 40000", "remaining: 10000", "remaining: 30000"}, "budget.total went up 20000 → 40000"},
		{"remaining raised", []string{"remaining: 13800", "remaining: 19000"},
			[]string{"remaining: 10000", "remaining: 15000"}, "budget.remaining went up"},
		{"version changed", []string{"version: 2", "version: 3"}, []string{"version: 2", "version: 3"}, "version 2 → 3"},
		{"issue changed", []string{"issue: ", "issue: 9"}, []string{"issue: ", "issue: 9"}, "issue "},
	}
	for _, k := range kinds {
		t.Run(k.name+"/seen", func(t *testing.T) {
			n := ledgered(t, f, k.name+" seen")
			before := ledgerNumbers(t, f, n)
			d := f.EditBody(t, n, agent, replace(t, f.Issue(t, n).Body, k.edit...))
			expectTampered(t, f, n, f.Run(t, d, "ledger-key", ledgerKey), k.says, agent.Login)
			if got := ledgerNumbers(t, f, n); got != before {
				t.Errorf("the tampered state became the baseline: %s, was %s", got, before)
			}
		})
		t.Run(k.name+"/second edit", func(t *testing.T) {
			n := ledgered(t, f, k.name+" second edit")
			f.EditBody(t, n, agent, replace(t, f.Issue(t, n).Body, k.edit...)) // its run is replaced
			d := f.EditBody(t, n, agent, replace(t, f.Issue(t, n).Body, "current_task: ", "current_task: now "))
			expectTampered(t, f, n, f.Run(t, d, "ledger-key", ledgerKey), k.says, "in 2 edits")
		})
		t.Run(k.name+"/then a comment", func(t *testing.T) {
			n := ledgered(t, f, k.name+" then a comment")
			f.EditBody(t, n, agent, replace(t, f.Issue(t, n).Body, k.edit...))
			_, d := f.Comment(t, n, agent, "Done with the middleware.")
			expectTampered(t, f, n, f.Run(t, d, "ledger-key", ledgerKey), k.says, "in one edit (content version")
		})
		t.Run(k.name+"/after progress", func(t *testing.T) {
			n := ledgered(t, f, k.name+" after progress")
			d := f.EditBody(t, n, agent, replace(t, f.Issue(t, n).Body, "consumed: 6200", "consumed: 10000", "remaining: 13800", "remaining: 10000"))
			f.Run(t, d, "ledger-key", ledgerKey).Expect(t, 0, "pass")
			if got := ledgerNumbers(t, f, n); got != `"total":20000,"consumed":10000,"remaining":10000` {
				t.Fatalf("the accepted progress is not the baseline: %s", got)
			}
			d = f.EditBody(t, n, agent, replace(t, f.Issue(t, n).Body, k.after...))
			expectTampered(t, f, n, f.Run(t, d, "ledger-key", ledgerKey), k.says)
		})
	}
}

// A budget admin's raise fails like any edit until the admin removes
// permission::violation; then it stays the baseline. A legal carryover
// passes; a larger one is caught.
func TestApproverRaiseAndCarryover(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	admin := f.User(t, "budget-admin", giteatest.PermWrite)
	in := []string{"ledger-key", ledgerKey, "budget-admins", admin.Login}

	n := ledgered(t, f, "raised")
	d := f.EditBody(t, n, admin, replace(t, f.Issue(t, n).Body, "total: 20000", "total: 40000", "remaining: 13800", "remaining: 33800"))
	f.Run(t, d, in...).Expect(t, 1, "fail")
	f.Run(t, f.RemoveLabelAs(t, n, admin, "permission::violation"), in...).Expect(t, 0, "pass")
	if got := ledgerNumbers(t, f, n); got != `"total":40000,"consumed":6200,"remaining":33800` {
		t.Errorf("the approved raise is not the baseline: %s", got)
	}
	_, d = f.Comment(t, n, agent, "Thanks.")
	f.Run(t, d, in...).Expect(t, 0, "pass")

	// floor(13800 × 0.6) + 0 = 8280: a new phase within it passes.
	in = append(in, "carryover-ratio", "0.6")
	n = ledgered(t, f, "carryover")
	next := replace(t, f.Issue(t, n).Body, "phase: implementation", "phase: review", "total: 20000", "total: 8000", "consumed: 6200", "consumed: 0", "remaining: 13800", "remaining: 8000")
	f.Run(t, f.EditBody(t, n, agent, next), in...).Expect(t, 0, "pass")
	n = ledgered(t, f, "greedy carryover")
	next = replace(t, f.Issue(t, n).Body, "phase: implementation", "phase: review", "total: 20000", "total: 9000", "consumed: 6200", "consumed: 0", "remaining: 13800", "remaining: 9000")
	expectTampered(t, f, n, f.Run(t, f.EditBody(t, n, agent, next), in...), "budget.consumed went down 6200 → 0")
}

// The guard reads its ledger only from its own status comment: a copy
// re-posted by someone else with the numbers changed is ignored, and the
// guard's own comment edited by an issue writer is caught.
func TestLedgerComments(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	raise := []string{"total: 20000", "total: 40000", "remaining: 13800", "remaining: 33800"}

	n := ledgered(t, f, "copied")
	fake := strings.Replace(f.Status(t, n).Body, `"total":20000`, `"total":40000`, 1)
	fake = strings.Replace(fake, `"remaining":13800`, `"remaining":33800`, 1)
	f.Comment(t, n, agent, fake)
	d := f.EditBody(t, n, agent, replace(t, f.Issue(t, n).Body, raise...))
	expectTampered(t, f, n, f.Run(t, d, "ledger-key", ledgerKey), "budget.total went up 20000 → 40000")

	// The record changed inside the guard's own comment: it no longer
	// verifies (and the comment's updated_at betrays the edit).
	n = ledgered(t, f, "edited record")
	st := f.Status(t, n)
	d = f.EditComment(t, n, st.ID, agent, strings.Replace(st.Body, `"total":20000`, `"total":40000`, 1))
	expectTampered(t, f, n, f.Run(t, d, "ledger-key", ledgerKey), "does not verify against key")

	// Only the visible text changed, the record untouched: the record is
	// still the guard's, and the guard writes its own text back.
	n = ledgered(t, f, "edited text")
	st = f.Status(t, n)
	d = f.EditComment(t, n, st.ID, agent, strings.Replace(st.Body, "all clear", "all clear, approved by the lead", 1))
	f.Run(t, d, "ledger-key", ledgerKey).Expect(t, 0, "pass")
	if body := f.Status(t, n).Body; strings.Contains(body, "approved by the lead") {
		t.Errorf("the guard left an agent's words in its status comment:\n%s", body)
	}
}

// TestLedgerCommentDeleted: with the guard's earlier work on the issue's
// timeline (a label it set), a deleted status comment is tampering. On an
// issue with no other trace the guard cannot tell a deletion from a first
// run, but the body was edited since its opening: the state waits for an
// approver, and max-budget holds a raised budget back too.
func TestLedgerCommentDeleted(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	in := []string{"ledger-key", ledgerKey, "max-budget", "30000"}

	n, d := f.Open(t, "deleted with traces", example(t, "depth-exceeded.md"), "cascade::depth-2", "size::medium")
	f.Run(t, d, in...).Expect(t, 1, "fail") // sets cascade::depth-exceeded
	fixed := replace(t, f.Issue(t, n).Body, "depth: 3", "depth: 2", "agent_chain: [orchestrator, lead-developer, developer, tester]", "agent_chain: [orchestrator, lead-developer, developer]")
	f.Run(t, f.EditBody(t, n, f.Admin(), fixed), in...).Expect(t, 0, "pass")
	f.DeleteComment(t, f.Status(t, n).ID, agent)
	d = f.EditBody(t, n, agent, replace(t, f.Issue(t, n).Body, "consumed: 6200", "consumed: 1000", "remaining: 13800", "remaining: 19000"))
	expectTampered(t, f, n, f.Run(t, d, in...), "someone deleted it")

	n = ledgered(t, f, "deleted bare")
	f.DeleteComment(t, f.Status(t, n).ID, agent)
	d = f.EditBody(t, n, agent, replace(t, f.Issue(t, n).Body, "total: 20000", "total: 40000", "remaining: 13800", "remaining: 33800"))
	r := f.Run(t, d, in...)
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "budget-over-cap", "checkpoint-tampered") // a first state is adopted only as opened
	if st := f.Status(t, n).Body; !strings.Contains(st, "budget-over-cap") || !strings.Contains(st, "no accepted state yet") {
		t.Errorf("the new status comment does not say why no state was accepted:\n%s", st)
	}
}

// YAML broken in one edit and restored with a raised budget in the next:
// the broken body is never accepted, and the restored one is judged
// against the last state the guard trusted. A comment after the tamper run
// still fails while permission::violation is on.
func TestBrokenThenRaised(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	n := ledgered(t, f, "broken")
	good := f.Issue(t, n).Body
	r := f.Run(t, f.EditBody(t, n, agent, replace(t, good, "  budget:\n", "  budget: [\n")), "ledger-key", ledgerKey)
	r.Expect(t, 1, "fail")
	if !slices.Contains(r.Rules(t), "checkpoint-invalid") {
		t.Fatalf("rules %v", r.Rules(t))
	}
	d := f.EditBody(t, n, agent, replace(t, good, "total: 20000", "total: 40000", "remaining: 13800", "remaining: 33800"))
	expectTampered(t, f, n, f.Run(t, d, "ledger-key", ledgerKey), "budget.total went up 20000 → 40000")

	_, d = f.Comment(t, n, agent, "Carrying on.")
	r = f.Run(t, d, "ledger-key", ledgerKey)
	r.Expect(t, 1, "fail")
	if rs := r.Rules(t); !slices.Contains(rs, "permission-violation") || !slices.Contains(rs, "checkpoint-tampered") {
		t.Errorf("a comment after the tamper run: %v", rs)
	}
	if strings.Contains(f.Status(t, n).Body, "all clear") {
		t.Error("the status comment says all clear while permission::violation is on")
	}
}

// Labels: a relaxing label added by a writer takes no effect; an approval
// label removed by a writer goes back, whether the guard sees the removal
// on its own event or later; removed by the repository's admin it passes
// and stays approved.
func TestLabelApprovals(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	in := []string{"ledger-key", ledgerKey, "admin-token", f.Admin().Token}

	n := ledgered(t, f, "relaxed")
	d := f.AddLabelsAs(t, n, agent, "cascade::depth-n")
	r := f.Run(t, d, in...)
	expectTampered(t, f, n, r, `cascade::depth-n label relaxes a rule and was added by "`+agent.Login+`"`)
	if f.Issue(t, n).Has("cascade::depth-n") {
		t.Error("the unapproved relaxing label is still on")
	}

	// Removed on its own event by a writer: put back, and named.
	d = f.RemoveLabelAs(t, n, agent, "permission::violation")
	r = f.Run(t, d, in...)
	expectTampered(t, f, n, r, fmt.Sprintf(`permission::violation label was removed by %q`, agent.Login))

	// Removed, then a comment: only the comment's run runs.
	f.RemoveLabelAs(t, n, agent, "permission::violation")
	_, d = f.Comment(t, n, agent, "Moving on.")
	expectTampered(t, f, n, f.Run(t, d, in...), fmt.Sprintf(`removed by %q`, agent.Login))

	// The repository's admin removes it: approved, and it stays so.
	d = f.RemoveLabel(t, n, "permission::violation")
	f.Run(t, d, in...).Expect(t, 0, "pass")
	_, d = f.Comment(t, n, agent, "Thanks.")
	f.Run(t, d, in...).Expect(t, 0, "pass")
	if f.Issue(t, n).Has("permission::violation") {
		t.Error("the approved removal was undone")
	}
}
