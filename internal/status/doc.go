// Package status says what a decision means to people: the sticky status
// comment and the step summary. It is pure.
//
//   - render.go, summary.go, budget.go: the comment, summary and burn.
//   - settle.go: Applied and Stable, the comment's fixed point.
//   - write.go: PlanWrite; the placeholder of a first run.
//   - next.go: NextInput, the issue after a run's writes.
//   - couldnot.go: a run that could not judge.
package status
