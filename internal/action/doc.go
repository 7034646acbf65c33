// Package action is the guard's shell in Gitea Actions: it reads the
// Actions environment and inputs, reads the issue live through the
// port, asks the decision core (package guard) for a plan, applies
// it in a crash-safe order, and reports (log, outputs, step summary,
// metrics).
//
// It owns the order of writes, the re-read after a compare-and-swap
// conflict, and the log's workflow-command fencing. It decides nothing a
// pure function could: rules, the status comment's text and the plan's
// description live in guard. The server is reached through the port
// (package port): the adapter is injected through Options.NewForge.
package action
