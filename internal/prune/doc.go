// Package prune plans the pruning of a checkpoint (docs/contract.md §5):
// history goes into archive comments, the body keeps the last entries as
// history_tail, and the phase budget resets. Rebuild reads the archives
// back and proves their signed chain against the ledger (Chain). It is
// pure; the caller posts the archives first, then writes the body.
package prune
