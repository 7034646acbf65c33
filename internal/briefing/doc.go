// Package briefing assembles what `gns-guard context` hands the next
// agent: its entry load under a hard token cap. It reads the issue (live,
// through package live, or offline from a body and a comments file), asks
// the guard for its figures, takes the task size's budget, assembles the
// load (package entryload), makes the protocol's cost check and refuses a
// checkpoint that alone does not fit. The result renders as text or JSON
// and gives the records a caller logs.
//
// It takes what it needs explicitly (a reader, a file reader, a clock), so
// the command line and a server call it alike; flags and output files are
// the caller's.
package briefing
