// Package prune plans the pruning of a GNS-2 checkpoint (docs/contract.md §5):
// the history entries it removes go into archive comments, the body keeps
// the last few as history_tail, and the phase budget is reset. It also reads
// archive comments back and rebuilds the full history from them. Every
// archive part records the link of the part before it and is signed
// (Ed25519, see Signer and Verifier), so Rebuild proves the chain of parts
// against the guard's ledger (see Chain): an archive edited, deleted or
// reordered shows.
//
// The package is pure: it makes no request and reads no clock. The caller
// posts the archive comments first, then writes the body; whether to prune
// is guard's decision.
package prune
