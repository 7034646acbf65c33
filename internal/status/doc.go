// Package status says what a decision means to people: the guard's
// sticky status comment and the step summary. It is pure: no I/O.
//
//   - render.go, summary.go: the comment and the summary of a plan.
//   - budget.go: the budget warnings, the wait for a person, the burn chart.
//   - settle.go: Applied, what a run's writes changed; Stable, the
//     comment once deciding again no longer changes it.
//   - write.go: PlanWrite, whether to write, reuse or move the comment;
//     the placeholder of a first run.
//   - next.go: NextInput, the issue after a run's writes, on which
//     report judges its prediction.
//   - couldnot.go: the comment of a run that could not judge the issue.
package status
