// Package guard is the pure decision core of gns-guard: the issue as read
// (body, labels, recent comments, the event that triggered the run) and the
// configuration in, a Plan out — every finding and every write that
// follows. It makes no request and reads no clock or environment; the shell
// (package action, or cli's check) applies or prints the plan.
//
// A map of the package:
//   - decide.go: Decide, the order of a decision; Input.
//   - plan.go: Plan, Violation, Numbers, and Write — the one description of
//     each write, used by check, the dry run and the apply log.
//   - rules.go: the rule table (id, when, effects, inputs) and how rules
//     run; rule_<id>.go: one rule each.
//   - prune.go: whether this run prunes, and its plan (package prune does
//     the rewriting); maintain.go: the recovery request and the digest.
//   - status.go, summary.go, settle.go: the sticky status comment, the step
//     summary, and Settle, the status comment's fixed point.
//   - markers.go: the hidden markers of the guard's own comments.
//   - issue.go, event.go, config.go: the types the shell fills in, and the
//     Forge interface the adapter (package forge) implements.
//
// It imports checkpoint, prune, agentcomment, tokens, finding and markdown;
// it must never import action, forge, cli or anything that does I/O.
package guard
