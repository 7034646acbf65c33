// Package guard is the pure decision core of gns-guard: the issue as read
// (package issues: body, labels, recent comments, the event that triggered
// the run) and the configuration in, a Plan out — every finding and every
// write that follows. It makes no request and reads no clock or
// environment; the shell (package action, or cli's check) applies or prints
// the plan, and package status writes the status comment from it.
//
// A map of the package:
//   - decide.go: Decide, the order of a decision; Input. change.go:
//     Input.After, the input of the next run once a change is made.
//   - plan.go: Plan, Violation, Numbers, and Write — the one description of
//     each write, used by check, the dry run and the apply log.
//   - rules.go: the rule table (id, when, effects, inputs) and how rules
//     run; rule_<id>.go: one rule each.
//   - trust.go: what a run trusts and who may approve; trust_labels.go: the
//     label changes since the ledger; trust_checkpoint.go: the checkpoint
//     against the ledger.
//   - ledger_read.go, anchor.go, history.go: whether the record found is
//     trusted (its signature, its anchor, the history it commits to);
//     ledger_write.go, burn.go: the record this run leaves (package ledger
//     encodes and signs it).
//   - prune.go: whether this run prunes, and its plan (package prune does
//     the rewriting); archives.go: the planned archive against the
//     comments posted; recovery.go, digest.go: the recovery request and
//     the completion digest.
package guard
