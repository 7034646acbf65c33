package guard

// checkBudgetOverCap holds an over-max-budget issue until budget::exhausted
// is removed.
func checkBudgetOverCap(e *decision) []Violation {
	t := &e.trust
	if e.cp == nil || e.cfg.MaxBudget <= 0 || (t.ledger != nil && t.ledger.Baseline) || t.problem != "" {
		return nil
	}
	if _, ok := t.approved[e.cfg.Labels.BudgetExhausted]; ok {
		return nil
	}
	total := e.cp.Budget.Total
	if total.Value <= e.cfg.MaxBudget {
		return nil
	}
	v := at(total.Pos, "checkpoint.budget.total", "a new issue's budget.total is %d, over max-budget %d: an approver (%s) accepts it by removing %s",
		total.Value, e.cfg.MaxBudget, e.cfg.Approvers(), e.cfg.Labels.BudgetExhausted)
	v.Label = e.cfg.Labels.BudgetExhausted
	return []Violation{v}
}
