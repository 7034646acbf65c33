// Package status writes the guard's sticky status comment and the step
// summary from a decision: the verdict, the findings, the budget and depth
// figures, the burn chart, what the ledger holds (render.go, summary.go,
// budget.go); Stable, the comment's fixed point (the issue decided again as
// the run leaves it, until the comment says the same twice); and the
// comment's write: whether the run writes it, reuses its record, or posts
// it anew at the end of the issue, and the placeholder a first run posts
// (write.go); and Next, the issue as a run's writes leave it for the next
// run, which `report` judges its prediction on (next.go).
//
// It sits above the decision core and does no I/O.
package status
