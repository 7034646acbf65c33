// Package action is the guard's shell in Gitea Actions: it reads the
// environment and inputs, reads the issue through the port, asks package
// guard for a plan, applies it in a crash-safe order, and reports it. It
// owns the order of writes, the re-read after a conflict, and the log's
// fencing; it decides nothing. Options.NewForge injects the adapter.
package action
