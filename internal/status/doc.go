// Package status writes what a decision says to people: the guard's
// sticky status comment and the step summary.
//
//   - render.go, summary.go, budget.go: the verdict, the findings, the
//     budget and depth figures, the burn chart, what the ledger holds.
//   - settle.go: Stable, the comment's fixed point (the issue decided
//     again as the run leaves it, until the comment says the same twice).
//   - write.go: whether the run writes the comment, reuses its record or
//     posts it anew at the end of the issue; the placeholder of a first run.
//   - next.go: NextInput, the issue as a run's writes leave it, which
//     report judges its prediction on.
//   - couldnot.go: the comment of a run that could not judge the issue.
//
// It sits above the decision core and does no I/O.
package status
