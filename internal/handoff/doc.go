// Package handoff is the pure core of the agents' exit and recovery
// protocols (`gns-guard report` and `gns-guard recover`).
//
//   - Apply computes what an agent's report does to an issue: the new
//     checkpoint (budget, last agent and invocation, the history entry,
//     next agent and estimate, phase, depth, labels, assignee) written into
//     the body with every byte outside the block kept. An overflowing
//     history_tail is left to the guard, whose run on the edit archives the
//     oldest entries in its own signed chain: nothing is dropped.
//   - Comment renders the result comment: the protocol's header, its
//     sections and the GNS_EVENT footer with every field docs/contract.md §5b lists.
//   - Inputs are the guard's decision inputs on the issue as it is and as
//     the report would leave it; the shell runs the guard's own decision
//     (guard.Decide) on both, and Judged pairs the two, so a report that
//     the guard would fail is refused before anything is written.
//   - Reconstruct rebuilds a checkpoint from the last state the guard
//     trusted (its ledger, or an archive) and the GNS_EVENT footers of the
//     agent comments since, saying where every field came from.
//
// It makes no request and reads no clock or environment: the shell
// (package cli) reads the issue, passes the time, and writes the results.
package handoff
