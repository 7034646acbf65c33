// Package posture judges whether a repository's permissions and settings
// let the guard's guarantees hold (docs/contract.md#4b-the-trusted-ledger):
// facts in (facts.go), checks out (judge.go), each saying whether it holds,
// why, and who breaks it. doctor and the action read the facts. gate.go
// judges the gated posture (docs/gate.md) and lists what it closes.
package posture
