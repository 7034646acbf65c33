// Package handoff is the pure core of `gns-guard report` and `recover`.
//
//   - Apply: what a report does to the checkpoint.
//   - Comment: the result comment with its GNS_EVENT footer
//     (docs/contract.md §5b).
//   - Inputs, Judged: the issue before and after; a report the guard
//     would fail is refused.
//   - Reconstruct: a checkpoint rebuilt from the ledger and the footers.
package handoff
