// Package guard is the pure decision core: the issue and configuration in,
// a Plan of findings and writes out. It makes no request and reads no clock.
//
//   - decide.go: Decide; plan.go: Plan and Write.
//   - rules.go: the rule table; rule_<id>.go: one rule each.
//   - trust*.go, ledger_*.go, anchor.go, history.go: the record trusted.
//   - prune.go, archives.go, recovery.go, digest.go: what the guard posts.
package guard
