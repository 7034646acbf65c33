package guard

import (
	"fmt"
	"slices"
	"time"

	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// The repository budget (docs/ledger.md#the-repository-budget): the
// budgets granted to the repository's governed issues within
// repository-budget-window — baselines, and raises an approver accepted —
// are capped by repository-budget. An agent that opens new issues to
// escape its budget finds the one over the cap held for an approver.

// checkRepositoryBudget holds a new issue whose budget.total would take
// the grants of the window over repository-budget (or whose grants cannot
// be counted: the list does not verify) until an approver accepts it by
// removing budget::exhausted. The approval binds the state flagged, as
// every approval does.
func checkRepositoryBudget(e *decision) []Violation {
	t := &e.trust
	limit := e.cfg.RepositoryBudget
	if e.cp == nil || limit <= 0 || (t.ledger != nil && t.ledger.Baseline) || t.problem != "" {
		return nil
	}
	if _, ok := t.approved[e.cfg.Labels.BudgetExhausted]; ok {
		return nil
	}
	total := e.cp.Budget.Total
	list, problem := e.grantList()
	var v Violation
	switch granted := e.granted(list); {
	case problem != "":
		v = at(total.Pos, "checkpoint.budget.total", "a new issue's budget.total of %d cannot be judged against repository-budget %d: "+
			"%s; an approver (%s) accepts it by removing %s, and the owner deletes the variable to let the guard start a new list",
			total.Value, limit, problem, e.cfg.Approvers(), e.cfg.Labels.BudgetExhausted)
	case ledger.AddTokens(granted, total.Value) > limit:
		v = at(total.Pos, "checkpoint.budget.total", "a new issue's budget.total of %d would take the budgets granted to this "+
			"repository's governed issues in the last %s from %d to %d, over repository-budget %d: an approver (%s) accepts it by removing %s",
			total.Value, Window(e.cfg.RepositoryBudgetWindow), granted, ledger.AddTokens(granted, total.Value), limit, e.cfg.Approvers(),
			e.cfg.Labels.BudgetExhausted)
	default:
		return nil
	}
	v.Label = e.cfg.Labels.BudgetExhausted
	return []Violation{v}
}

// grantList is empty when unknown, or says why untrusted.
func (e *decision) grantList() (*ledger.Grants, string) {
	st := e.in.Grants
	if !st.Known {
		return &ledger.Grants{}, ""
	}
	return ledger.ReadGrants(st.Text, e.in.Issue.RepoID, ledger.ConfigKeys(e.cfg))
}

// granted is the window's grants; nil: nothing known.
func (e *decision) granted(list *ledger.Grants) int64 {
	if list == nil {
		return 0
	}
	return ledger.Sum(ledger.Since(list.Grants, e.windowStart()))
}

// windowStart is when repository-budget-window began.
func (e *decision) windowStart() time.Time { return e.in.Now.Add(-e.cfg.RepositoryBudgetWindow) }

// Window writes whole days as "7d", as the setting reads.
func Window(d time.Duration) string {
	if day := 24 * time.Hour; d >= day && d%day == 0 {
		return fmt.Sprintf("%dd", d/day)
	}
	return d.String()
}

// recordGrant records in l what this run grants the issue: a first baseline its
// total; an approved state what it raises the budget by (over the accepted
// total in a phase, over the accepted remaining on a new phase). Grants outside
// the window are dropped.
func (e *decision) recordGrant(l *ledger.Record) {
	old := e.trust.ledger
	if old != nil {
		l.Grants = old.Grants
	}
	if e.cfg.RepositoryBudget <= 0 || e.cp == nil {
		return
	}
	n := e.grantedNow(old, l)
	if n <= 0 {
		return
	}
	g := ledger.Grant{Issue: e.in.Issue.Number, Tokens: n, Time: e.in.Now.Unix()}
	for slices.Contains(l.Grants, g) {
		g.Time++ // two equal grants in one second (two phases) stay two
	}
	l.Grants = append(ledger.Since(l.Grants, e.windowStart()), g)
}

// grantedNow is what accepting the checkpoint as read grants, over the
// record old, the state accepted being l: a first baseline its total; a
// raise an approver accepted what it adds; a new phase — the guard's own
// prune or one made by hand — what it holds beyond the remainder carried
// over (the phase grant).
func (e *decision) grantedNow(old, l *ledger.Record) int64 {
	b := e.cp.Budget
	if old == nil || !old.Baseline {
		return b.Total.Value
	}
	_, approved := e.trust.approved[e.cfg.Labels.PermissionViolation]
	switch {
	case approved && e.cp.Phase.Value != old.Phase:
		return b.Total.Value - old.Remaining
	case approved:
		return b.Total.Value - old.Total
	case e.plan.Prune != nil && l.ContentVersion > e.in.Issue.ContentVersion && e.plan.Prune.NewBudget != e.plan.Prune.Budget:
		return l.Total - carried(b.Remaining.Value, e.cfg.CarryoverRatio)
	case e.cp.Phase.Value != old.Phase && b.Consumed.Value == 0 && b.Total.Value == b.Remaining.Value:
		return b.Total.Value - carried(old.Remaining, e.cfg.CarryoverRatio)
	}
	return 0 // progress grants nothing new
}

// phaseGrant is the phase grant a new phase may take now: phase-grant, or
// less when repository-budget is kept and the grants of the window leave
// less (none when the grant list does not verify).
func (e *decision) phaseGrant() int64 {
	limit := e.cfg.RepositoryBudget
	if limit <= 0 || e.cfg.PhaseGrant <= 0 {
		return e.cfg.PhaseGrant
	}
	list, problem := e.grantList()
	if problem != "" {
		return 0
	}
	return min(e.cfg.PhaseGrant, max(0, limit-e.granted(list)))
}

// planGrants plans the write of the issue's grants within the window that
// the grant list lacks: a grant this run makes, or one a concurrent run's
// write of the list dropped. A list that does not verify is left for the
// owner to delete (the finding, or the shell's note, says so).
func (e *decision) planGrants() {
	l := e.plan.Ledger
	if e.cfg.RepositoryBudget <= 0 || l == nil {
		return
	}
	list, problem := e.grantList()
	if problem != "" {
		return
	}
	e.plan.Grants = ledger.Missing(ledger.Since(l.Grants, e.windowStart()), list.Grants)
}

// BurnLine says the window's share of repository-budget.
func BurnLine(granted, limit int64, window time.Duration) string {
	pct := float64(granted) / float64(limit) * 100
	return fmt.Sprintf("%s of %s tokens granted in the last %s (%.0f%%)", tokens.Format(granted), tokens.Format(limit), Window(window), pct)
}
