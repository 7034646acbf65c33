// Package offline is the guard's work with no server. Check and Prune run
// its decision on a body as `check` and `prune` do: the given labels, else
// the checkpoint's; no comments, no ledger. The small verbs' work is here
// too: the rule table, the schema, token counts, text checks, ledger keys.
//
// It does no I/O; NewKey alone reads randomness.
package offline
