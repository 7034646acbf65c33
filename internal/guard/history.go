package guard

import (
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/finding"

	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// judgeHistory checks that the body still holds, in order and unchanged,
// every accepted entry the archives do not: the ledger's Entries, less
// those archived up to the chain's end (an archive posted by a run that
// died before recording it is followed: its entries left the body). An
// accepted entry may move to an archive, never vanish or change.
func (e *decision) judgeHistory(l *ledger.Record, body []prune.Entry) string {
	if l.EntriesHash == "" || e.plan.ChainForked {
		return "" // a record from before the ledger kept the history, or a fork (judgeFork)
	}
	archivedHash, archived := e.archivedPrefix(l)
	keep := l.Entries - archived
	switch {
	case keep < 0 && e.acceptedBeyondLedger(l, body):
		return "" // a run archived entries not accepted yet and died before recording
	case keep < 0:
		return fmt.Sprintf("the archives hold %d entries, more than the %d the ledger accepted", archived, l.Entries)
	case len(body) < keep:
		return fmt.Sprintf("the ledger accepted %d history entries (%d archived), the body holds %d of the other %d: accepted entries "+
			"vanished", l.Entries, archived, len(body), keep)
	case ledger.HistoryHash(archivedHash, body[:keep]) != l.EntriesHash:
		return fmt.Sprintf("the first %d history entries of the body are not the %d the ledger accepted after the %d archived ones: an "+
			"accepted entry changed or vanished", keep, keep, archived)
	}
	return ""
}

// archivedPrefix extends the ledger's hash and count over parts posted but
// unrecorded.
func (e *decision) archivedPrefix(l *ledger.Record) (string, int) {
	h, n := l.ArchivedHash, l.Archived
	if l.EntriesHash == "" && n > 0 {
		h = legacyArchived(n)
	}
	for _, p := range e.archiveChainParts() {
		h = ledger.HistoryHash(h, p.Archive.Entries)
		n = p.Archive.Count
	}
	return h, n
}

// acceptedBeyondLedger reports whether the accepted entries the ledger's
// archives do not hold are, in order and unchanged, the first entries of
// the guard's parts past the ledger's end and then the body: a run that
// archived entries of the same edit, not accepted yet, and died before
// recording it left them so (archives batch, docs/choices.md#pruning).
func (e *decision) acceptedBeyondLedger(l *ledger.Record, body []prune.Entry) bool {
	var after []prune.Entry
	for _, p := range e.archiveChainParts() {
		after = append(after, p.Archive.Entries...)
	}
	after = append(after, body...)
	need := l.Entries - l.Archived
	if l.ArchivedHash == "" && l.Archived > 0 || need < 0 || need > len(after) {
		return false
	}
	return ledger.HistoryHash(l.ArchivedHash, after[:need]) == l.EntriesHash
}

// judgeFork notes two of the guard's archive parts continuing the history from
// one place. Concurrent prunes make one briefly; a run cut short leaves it.
// Which part holds the entries cannot be told, so this run neither judges the
// history, prunes, nor accepts a baseline: the shell reads again
// (docs/choices.md#pruning).
func (e *decision) judgeFork() {
	fork := e.archiveChain().fork
	if len(fork) == 0 {
		return
	}
	ids := make([]string, len(fork))
	for i, p := range fork {
		ids[i] = fmt.Sprintf("comment %d", p.ID)
	}
	e.plan.ChainForked = true
	e.plan.Warnings = append(e.plan.Warnings, finding.Finding{
		Rule: RulePrune, Severity: finding.Warning, KeyPath: "checkpoint.history_tail",
		Line: e.blockPos().Line, Col: e.blockPos().Col,
		Message: fmt.Sprintf("the guard's archives %s continue the history from the same place: a run that lost its body write to "+
			"another did not withdraw its archive; the guard keeps the state it accepted last and does not prune until one is deleted "+
			"(gns-guard history shows both; the one whose entries the body lacks stays)", strings.Join(ids, " and ")),
	})
}
