package guard

import (
	"fmt"
	"testing"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// A report adds several entries at once and takes the tail past twice
// history-tail: the guard's prune archives accepted entries and new ones
// together. The run dies after its archive and its body write, before the
// status comment: the next run follows the archive past the ledger's end
// and finds every accepted entry there, in order. Not tampering.
func TestArchiveOfEntriesNotAcceptedYetIsNoTampering(t *testing.T) {
	in := input(t, body(), "cascade::depth-2")
	in.Config.LedgerKey = testKey
	l := firstLedger(t, in)
	withLedger(&in, l)
	tail := "    - {agent: orchestrator, action: planned, timestamp: \"2026-05-16T12:58:00Z\"}\n"
	grown := tail
	for i := range 6 {
		grown += fmt.Sprintf("    - {agent: dev, action: step %d, timestamp: \"2026-05-16T13:0%d:00Z\"}\n", i, i)
	}
	in.Issue.Body = body(tail, grown)
	p := Decide(in)
	if p.Prune == nil || p.Prune.Removed != 4 || len(p.Violations) != 0 {
		t.Fatalf("the prune of a tail of 7: %v %+v", ruleIDs(p), p.Prune)
	}
	// The archive landed, the body too; the ledger did not move.
	next := input(t, p.Prune.Body, "cascade::depth-2")
	next.Config.LedgerKey = testKey
	next.Issue.ContentVersion = 1
	for i, a := range p.Prune.Archives {
		next.Recent = append(next.Recent, issues.Comment{ID: int64(60 + i), Author: next.Self, Body: a})
	}
	withLedger(&next, l)
	if q := Decide(next); len(q.Violations) != 0 {
		t.Errorf("the run after: %v\n%v", ruleIDs(q), q.Violations)
	}
}
