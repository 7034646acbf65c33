package guard

// checkNextOverBudget rejects estimates over half the remainder; at zero,
// budget-exhausted says so.
func checkNextOverBudget(e *decision) []Violation {
	if e.cp == nil {
		return nil
	}
	rem, next := e.cp.Budget.Remaining.Value, e.cp.NextEstimatedTokens
	if rem <= 0 || next.Value <= NextAllowance(rem) {
		return nil
	}
	return []Violation{at(next.Pos, "checkpoint.next_estimated_tokens", "the next call is estimated at %d tokens, more than half of "+
		"the %d remaining (limit %d): split the task or get more budget approved",
		next.Value, rem, NextAllowance(rem))}
}
