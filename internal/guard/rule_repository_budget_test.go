package guard

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// budgeted is a new issue (no ledger) of total budget.total under
// repository-budget 70,000, the grant list holding 60,000 granted in the
// window (and an older grant outside it).
func budgeted(t *testing.T, total, remaining string) Input {
	t.Helper()
	in := input(t, raised(total, remaining), "cascade::depth-2")
	in.Config.LedgerKey, in.Config.RepositoryBudget, in.Issue.ContentVersion = testKey, 70000, 0
	in.Issue.RepoID = 3
	now := in.Now.Unix()
	list := ledger.Grants{Repo: 3, Grants: []ledger.Grant{
		{Issue: 1, Tokens: 500000, Time: in.Now.Add(-8 * 24 * time.Hour).Unix()}, // outside 7d
		{Issue: 2, Tokens: 40000, Time: now - 3600},
		{Issue: 3, Tokens: 20000, Time: now - 60},
	}}
	in.Grants = ledger.GrantState{Known: true, Text: ledger.EncodeGrants(list, testKey)}
	return in
}

func repoBudgetFinding(p *Plan) *Violation {
	for i, v := range p.Violations {
		if v.Rule == RuleRepositoryBudget {
			return &p.Violations[i]
		}
	}
	return nil
}

// A new issue that fits the window's budget is adopted and granted; the one
// that would take the window over the cap waits for an approver, the
// finding naming what the window holds and the cap.
func TestRepositoryBudgetHoldsANewIssueOverTheCap(t *testing.T) {
	in := budgeted(t, "10000", "7000")
	p := Decide(in)
	want := ledger.Grant{Issue: 9, Tokens: 10000, Time: in.Now.Unix()}
	if len(p.Violations) != 0 || !p.Ledger.Baseline || !slices.Equal(p.Grants, []ledger.Grant{want}) || !slices.Equal(p.Ledger.Grants, []ledger.Grant{want}) {
		t.Fatalf("60,000 + 10,000 fits 70,000: %v grants %v record %+v", ruleIDs(p), p.Grants, p.Ledger)
	}
	in = budgeted(t, "10001", "7001")
	p = Decide(in)
	v := repoBudgetFinding(p)
	if v == nil {
		t.Fatalf("60,000 + 10,001 over 70,000 passed: %v", ruleIDs(p))
	}
	for _, s := range []string{"budget.total of 10001", "in the last 7d from 60000 to 70001", "over repository-budget 70000", "removing budget::exhausted"} {
		if !strings.Contains(v.Message, s) {
			t.Errorf("the finding lacks %q: %s", s, v.Message)
		}
	}
	if v.Label != "budget::exhausted" || p.Ledger.Baseline || len(p.Grants) != 0 || p.Ledger.Flag == nil {
		t.Errorf("over the cap: label %q, record %+v, grants %v", v.Label, p.Ledger, p.Grants)
	}
}

// The approver's removal of budget::exhausted accepts the state flagged
// (and grants it); an edit after the flag is judged anew.
func TestRepositoryBudgetApprovalBinds(t *testing.T) {
	in := budgeted(t, "30000", "27000")
	p := Decide(in)
	l := *p.Ledger
	l.Written = written.Unix()
	l.Labels = append(l.Labels, issues.Label{ID: 5, Name: "budget::exhausted"})
	withLedger(&in, l)
	in.LabelEvents = []issues.LabelEvent{{Label: "budget::exhausted", LabelID: 5, Actor: "alice", At: written.Add(time.Minute)}}
	in.Config.BudgetAdmins = []string{"alice"}
	p = Decide(in)
	if len(p.Violations) != 0 || !p.Ledger.Baseline || ledger.Sum(p.Grants) != 30000 {
		t.Errorf("the approved state: %v %+v grants %v", ruleIDs(p), p.Ledger, p.Grants)
	}
	in.Issue.Body, in.Issue.ContentVersion = raised("900000", "897000"), 1
	if p := Decide(in); repoBudgetFinding(p) == nil || p.Ledger.Baseline || len(p.Grants) != 0 {
		t.Errorf("900,000 after the approval of 30,000: %v %+v", ruleIDs(p), p.Ledger)
	}
}

// A grant list that does not verify holds every new issue: the guard
// cannot count the window.
func TestRepositoryBudgetListThatDoesNotVerify(t *testing.T) {
	in := budgeted(t, "4000", "1000")
	in.Grants.Text = strings.Replace(in.Grants.Text, `"grants":[`, `"grants":[[7,1,1],`, 1)
	v := repoBudgetFinding(Decide(in))
	if v == nil || !strings.Contains(v.Message, "does not verify") || !strings.Contains(v.Message, "deletes the variable") {
		t.Fatalf("an edited list: %+v", v)
	}
	in.Grants.Text = "nothing"
	if v := repoBudgetFinding(Decide(in)); v == nil || !strings.Contains(v.Message, "does not hold a grant list the guard wrote") {
		t.Fatalf("a hand-written list: %+v", v)
	}
}

// A raise an approver accepts is a grant (by what it raises), progress
// is none, and no grant is made while no cap is set.
func TestRepositoryBudgetCountsApprovedRaises(t *testing.T) {
	_, in := flaggedRaise(t)
	in.Config.RepositoryBudget = 1000000
	in.Grants = ledger.GrantState{Known: true}
	p := Decide(in)
	if len(p.Violations) != 0 || !slices.Equal(p.Grants, []ledger.Grant{{Issue: 9, Tokens: 10000, Time: in.Now.Unix()}}) {
		t.Errorf("an approved raise of 10,000: %v grants %v", ruleIDs(p), p.Grants)
	}
	progress := trusted(t, 5, "consumed: 3000", "consumed: 4000", "remaining: 7000", "remaining: 6000")
	progress.Config.RepositoryBudget = 1000000
	progress.Grants = ledger.GrantState{Known: true}
	if p := Decide(progress); len(p.Grants) != 0 || len(p.Ledger.Grants) != 0 {
		t.Errorf("progress granted %v", p.Grants)
	}
	_, in = flaggedRaise(t)
	if p := Decide(in); len(p.Grants) != 0 || len(p.Ledger.Grants) != 0 {
		t.Errorf("no cap, yet a grant: %v", p.Grants)
	}
}

// The record keeps the issue's grants: a grant the list lacks (a
// concurrent run's write dropped it) is written again by the next run; a
// grant outside the window is not.
func TestRepositoryBudgetRestoresALostGrant(t *testing.T) {
	in := trusted(t, 4)
	in.Config.RepositoryBudget = 1000000
	l := accepted()
	mine := ledger.Grant{Issue: 9, Tokens: 10000, Time: in.Now.Add(-time.Hour).Unix()}
	old := ledger.Grant{Issue: 9, Tokens: 5000, Time: in.Now.Add(-10 * 24 * time.Hour).Unix()}
	l.Grants = []ledger.Grant{old, mine}
	in.Recent = nil
	withLedger(&in, l)
	other := ledger.Grants{Grants: []ledger.Grant{{Issue: 4, Tokens: 3000, Time: in.Now.Unix()}}}
	in.Grants = ledger.GrantState{Known: true, Text: ledger.EncodeGrants(other, testKey)}
	if p := Decide(in); len(p.Violations) != 0 || !slices.Equal(p.Grants, []ledger.Grant{mine}) {
		t.Errorf("the lost grant: %v grants %v", ruleIDs(p), p.Grants)
	}
	other.Grants = append(other.Grants, mine)
	in.Grants.Text = ledger.EncodeGrants(other, testKey)
	if p := Decide(in); len(p.Grants) != 0 {
		t.Errorf("a clean pass with the grant listed plans %v", p.Grants)
	}
}

// phased is the accepted issue of trusted() under repository-budget
// 100,000 and phase-grant 20,000, the grant list holding 90,000 granted in
// the window: a new phase may take 10,000 beyond its carried remainder.
func phased(t *testing.T, cv int, edits ...string) Input {
	t.Helper()
	in := trusted(t, cv, edits...)
	in.Config.RepositoryBudget, in.Config.PhaseGrant = 100000, 20000
	list := ledger.Grants{Grants: []ledger.Grant{{Issue: 2, Tokens: 90000, Time: in.Now.Unix() - 60}}}
	in.Grants = ledger.GrantState{Known: true, Text: ledger.EncodeGrants(list, testKey)}
	return in
}

// Every phase is counted: a new phase made by hand takes a new phase name
// and at most the carried remainder (7,000 × 0.5) plus what the
// repository budget leaves of phase-grant (10,000), and what it takes
// beyond the remainder is a grant; the guard's own prune is held to the
// same.
func TestEveryPhaseIsCounted(t *testing.T) {
	p := Decide(phased(t, 5, "phase: build", "phase: review", "total: 10000", "total: 13500", "consumed: 3000", "consumed: 0", "remaining: 7000", "remaining: 13500"))
	want := []ledger.Grant{{Issue: 9, Tokens: 10000, Time: p.Ledger.Grants[len(p.Ledger.Grants)-1].Time}}
	if len(p.Violations) != 0 || p.Ledger.Total != 13500 || !slices.Equal(p.Grants, want) {
		t.Fatalf("a new phase of 3,500 carried + 10,000: %v record %+v grants %v", ruleIDs(p), p.Ledger, p.Grants)
	}
	for name, edits := range map[string][]string{
		"same name":         {"total: 10000", "total: 3500", "consumed: 3000", "consumed: 0", "remaining: 7000", "remaining: 3500"},
		"over what is left": {"phase: build", "phase: review", "total: 10000", "total: 13501", "consumed: 3000", "consumed: 0", "remaining: 7000", "remaining: 13501"},
	} {
		if msg := tamperMessage(t, Decide(phased(t, 5, edits...))); !strings.Contains(msg, "budget.") {
			t.Errorf("%s: %s", name, msg)
		}
	}
	pr := Decide(phased(t, 5, "consumed: 3000", "consumed: 9000", "remaining: 7000", "remaining: 1000"))
	if pr.Prune == nil || pr.Prune.NewBudget.Total != 500+10000 || ledger.Sum(pr.Grants) != 10000 {
		t.Fatalf("the guard's prune: %+v grants %v", pr.Prune, pr.Grants)
	}
}
