package guard

// checkBudget fails while budget::exhausted is on: a person's removal is the
// approval.
func checkBudget(e *decision) []Violation {
	label := e.cfg.Labels.BudgetExhausted
	if e.cp != nil {
		b := e.cp.Budget
		if b.Remaining.Value <= 0 {
			v := at(b.Remaining.Pos, "checkpoint.budget.remaining", "the budget is exhausted: %d of %d tokens consumed, %d remaining; a "+
				"person must approve more (raise budget.total, then remove the %s label)",
				b.Consumed.Value, b.Total.Value, b.Remaining.Value, label)
			v.Label = label
			return []Violation{v}
		}
	}
	if e.hasLabel(label) {
		v := at(e.blockPos(), "", "the %s label is set: the workflow waits for a person to remove it (that removal approves more budget)", label)
		v.Label = label
		return []Violation{v}
	}
	return nil
}
