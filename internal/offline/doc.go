// Package offline runs the guard's decision on an issue body with no
// server, as `check` and `prune` do: the given labels, else the
// checkpoint's record of them; no comments, no ledger.
//
// Check reports the findings and planned writes; Prune what pruning makes
// of the body, or why no trigger fired. It does no I/O.
package offline
