// Package briefing assembles what `gns-guard context` hands the next
// agent: its entry load under a hard token cap, with the guard's figures
// and the protocol's cost check. A checkpoint that alone does not fit is
// refused.
//
// It takes a reader, a file reader and a clock, not flags, so the
// command line and a server call it alike.
package briefing
