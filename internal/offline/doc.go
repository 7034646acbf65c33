// Package offline runs the guard's decision on an issue body with no
// server, as `check` and `prune` do, and reports it.
//
//   - decide.go: Decide, the decision on a body: the labels are the given
//     live ones, else the checkpoint's own record of them; no comments,
//     no ledger.
//   - check.go: Check, the findings and the writes the action would make,
//     with the one line a clean check prints.
//   - prune.go, triggers.go: Prune, what pruning makes of the body, and
//     when nothing is pruned, how each prune trigger was judged.
//
// It sits above the decision core and does no I/O.
package offline
