package action_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// grantsOf reads the repository's grant list as the owner, verified with
// the tests' key, as issue -> tokens granted.
func grantsOf(t *testing.T, f fixture) map[int64]int64 {
	t.Helper()
	v := struct{ Data string }{f.Variable(t, ledger.GrantsName)}
	keys, err := ledger.NewKeys([]byte(ledgerKey), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	list, problem := ledger.ReadGrants(v.Data, 0, keys)
	if problem != "" {
		t.Fatalf("the grant list does not verify: %s\n%s", problem, v.Data)
	}
	out := map[int64]int64{}
	for _, g := range list.Grants {
		out[g.Issue] += g.Tokens
	}
	return out
}

// Attack 9: an agent opens new governed issues to escape every budget.
// With repository-budget 50,000, two issues of 20,000 are adopted; the
// third, which would take the window to 60,000, waits for an approver,
// the finding naming both numbers; the owner's removal of budget::exhausted
// accepts it; on a fourth, an edit the agent slips in after the approval
// is judged anew. The agent cannot write the grant list itself.
func TestNewIssuesEscapeNoRepositoryBudget(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	in := anchoredInputs(f, "repository-budget", "50000")
	var numbers []int64
	for _, title := range []string{"first", "second"} {
		n, d := f.OpenAs(t, agent, title, example(t, "healthy.md"), governed...)
		f.Run(t, d, in...).Expect(t, 0, "pass")
		numbers = append(numbers, n)
	}
	if got := grantsOf(t, f); got[numbers[0]] != 20000 || got[numbers[1]] != 20000 || len(got) != 2 {
		t.Fatalf("the grants of two adopted issues: %v", got)
	}
	third, d := f.OpenAs(t, agent, "third", example(t, "healthy.md"), governed...)
	r := f.Run(t, d, in...)
	r.Expect(t, 1, "fail")
	if !slices.Contains(r.Rules(t), "repository-budget-exceeded") || !findingSays(t, r, "from 40000 to 60000", "over repository-budget 50000") {
		t.Errorf("the third issue over the cap: %v %v", r.Rules(t), r.Violations(t))
	}
	if st := f.Status(t, third).Body; !f.Issue(t, third).Has("budget::exhausted") || strings.Contains(st, `"baseline":true`) {
		t.Errorf("the third issue was adopted, or not labelled:\n%s", st)
	}
	if _, ok := grantsOf(t, f)[third]; ok {
		t.Error("the held issue was granted its budget")
	}
	// The agent removes the label itself: put back, and
	// permission::violation with it.
	r = f.Run(t, f.RemoveLabelAs(t, third, agent, "budget::exhausted"), in...)
	r.Expect(t, 1, "fail")
	if !f.Issue(t, third).Has("budget::exhausted") {
		t.Error("the agent's removal of budget::exhausted approved its own issue")
	}
	// The owner's removals accept it, and grant it.
	f.RemoveLabelAs(t, third, f.Admin(), "permission::violation") // its run replaced by the next
	f.Run(t, f.RemoveLabelAs(t, third, f.Admin(), "budget::exhausted"), in...).Expect(t, 0, "pass")
	if st := f.Status(t, third).Body; !strings.Contains(st, `"baseline":true`) || grantsOf(t, f)[third] != 20000 {
		t.Errorf("the approved issue was not adopted and granted: %v\n%s", grantsOf(t, f), st)
	}
	// A fourth: the owner approves 20,000, the agent's 900,000 follows
	// before the approval's run.
	fourth, d := f.OpenAs(t, agent, "fourth", example(t, "healthy.md"), governed...)
	f.Run(t, d, in...).Expect(t, 1, "fail")
	approval := f.RemoveLabelAs(t, fourth, f.Admin(), "budget::exhausted")
	f.EditBody(t, fourth, agent, replace(t, f.Issue(t, fourth).Body, "total: 20000", "total: 900000", "remaining: 13800", "remaining: 893800"))
	r = f.Run(t, approval, in...)
	r.Expect(t, 1, "fail")
	if !findingSays(t, r, "budget::exhausted label was removed by", "changed after the guard flagged it") || !slices.Contains(r.Rules(t), "repository-budget-exceeded") {
		t.Errorf("the edit after the approval was not judged anew: %v %v", r.Rules(t), r.Violations(t))
	}
	if _, ok := grantsOf(t, f)[fourth]; ok || !f.Issue(t, fourth).Has("budget::exhausted") {
		t.Errorf("900,000 was granted, or budget::exhausted not put back: %v", grantsOf(t, f))
	}
	// Only the owner writes Actions variables.
	err := f.S.Dial(agent.Token).SetVariable(t.Context(), ledger.GrantsName, "gns-guard:budget v1 {} kid=- sig=unsigned", false)
	if err == nil {
		t.Error("the agent wrote the grant list")
	}
}

// Two issues opened at once are both handed the same grant list: the later
// run reads the list anew before it writes, judges against the earlier
// grant, and keeps it. The grant write costs two requests (read, write);
// a clean pass stays at two.
func TestRepositoryBudgetRace(t *testing.T) {
	f := newFakeFixture(t)
	in := anchoredInputs(f, "repository-budget", "30000")
	// The governance labels pinned first (a first run's own cost).
	_, d0 := f.Open(t, "pins", example(t, "healthy.md"), governed...)
	f.Run(t, d0, anchoredInputs(f)...).Expect(t, 0, "pass")
	a, da := f.Open(t, "a", example(t, "healthy.md"), governed...)
	_, db := f.Open(t, "b", example(t, "healthy.md"), governed...)
	stale := f.Step(in...)
	stale.Env["GNS_GUARD_BUDGET"] = "grants:" // what the runner handed b's job: no grant yet
	ra := f.Run(t, da, in...)
	ra.Expect(t, 0, "pass")
	rb := stale.Run(t, db)
	rb.Expect(t, 1, "fail")
	if !findingSays(t, rb, "from 20000 to 40000", "over repository-budget 30000") {
		t.Errorf("the later issue was not judged against the earlier grant: %v", rb.Violations(t))
	}
	if got := grantsOf(t, f); got[a] != 20000 || len(got) != 1 {
		t.Errorf("the grants after the race: %v", got)
	}
	// The grant's cost: a first run with the cap against one without.
	_, dc := f.Open(t, "c", example(t, "healthy.md"), governed...)
	plain := f.Run(t, dc, anchoredInputs(f)...)
	plain.Expect(t, 0, "pass")
	if !slices.ContainsFunc(ra.Writes, func(w string) bool {
		return strings.HasPrefix(w, "wrote the grant list GNS_GUARD_BUDGET (20000 tokens granted to issue #")
	}) {
		t.Errorf("the grant write is not reported: %q", ra.Writes)
	}
	t.Logf("a first run that grants: %d requests and %d with admin-token; one that does not: %d and %d", ra.Requests, ra.AdminRequests, plain.Requests, plain.AdminRequests)
	if ra.Requests != plain.Requests || ra.AdminRequests != plain.AdminRequests+2 {
		t.Errorf("a first run that grants made %d+%d requests (with admin-token), one that does not %d+%d: want 2 more with admin-token (read and write the list)\n%s", ra.Requests, ra.AdminRequests, plain.Requests, plain.AdminRequests, ra.String())
	}
	f.Run(t, da, in...).Expect(t, 0, "pass") // the run after the first settles the status comment
	clean := f.Run(t, da, in...)
	clean.Expect(t, 0, "pass")
	if clean.Requests != 2 || clean.AdminRequests != 0 || len(clean.Writes) != 0 {
		t.Errorf("a clean pass under the repository budget made %d requests and %d with admin-token, and wrote %q; want 2, none and nothing\n%s", clean.Requests, clean.AdminRequests, clean.Writes, clean.String())
	}
	// Without admin-token the cap cannot be kept: a new issue is judged
	// against the list the runner hands over, and the status comment says
	// that no grant is recorded.
	e, de := f.Open(t, "e", example(t, "healthy.md"), governed...)
	r := f.Run(t, de, "ledger-key", ledgerKey, "repository-budget", "30000")
	r.Expect(t, 1, "fail")
	if !findingSays(t, r, "from 20000 to 40000") || !strings.Contains(f.Status(t, e).Body, "admin-token is not: the grants cannot be recorded") {
		t.Errorf("without admin-token: %v\n%s", r.Violations(t), f.Status(t, e).Body)
	}
}
