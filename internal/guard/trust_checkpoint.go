package guard

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// judgeCheckpoint holds the checkpoint to the ledger: version and issue never
// change, consumed never falls, total and remaining never rise but by a legal
// phase change or an approver. An untrusted record is tampering too; an
// approval in this run accepts the state.
func (e *decision) judgeCheckpoint() {
	t := &e.trust
	if _, ok := t.approved[e.cfg.Labels.PermissionViolation]; ok {
		return
	}
	if t.problem != "" {
		t.tamper = append(t.tamper, e.untrustedFinding())
		return
	}
	l, cur := t.ledger, e.checkpointAsWritten()
	if l != nil && l.Baseline && len(e.parsed.Blocks) == 0 {
		t.tamper = append(t.tamper, e.goneFinding(l))
		return
	}
	if l == nil || !l.Baseline {
		e.judgeFirstEdit()
		return
	}
	if cur == nil {
		return
	}
	if changes, pos := checkpointChanges(l, cur); len(changes) > 0 && (e.cp == nil || !e.legalTransition(l)) {
		t.tamper = append(t.tamper, e.tamperedFinding(l, pos, changes))
	}
	e.judgeEntries(l, cur)
	t.tamper = append(t.tamper, e.resultsFindings()...)
	e.taskTampered()
}

// goneFinding: a deleted checkpoint leaves the issue governed.
func (e *decision) goneFinding(l *ledger.Record) Violation {
	pv := e.cfg.Labels.PermissionViolation
	v := at(e.blockPos(), "", "the checkpoint block the guard accepted at content version %d is gone from the body (content version "+
		"now %d): someone deleted it; the issue stays governed — restore the block (gns-guard recover rebuilds it), or an approver "+
		"removes %s to accept the body as it is",
		l.ContentVersion, e.in.Issue.ContentVersion, pv)
	v.Label = pv
	return v
}

// untrustedFinding is for a record that cannot be trusted.
func (e *decision) untrustedFinding() Violation {
	pv := e.cfg.Labels.PermissionViolation
	v := at(e.blockPos(), "", "%s; the guard keeps its last trusted state and fails every run until an approver removes %s", e.trust.problem, pv)
	v.Label = pv
	return v
}

// checkpointAsWritten counts even an invalid checkpoint; nil without a
// block.
func (e *decision) checkpointAsWritten() *checkpoint.Checkpoint {
	if e.cp == nil && e.parsed.Block() != nil {
		return e.parsed.Checkpoint
	}
	return e.cp
}

// checkpointChanges lists approver-only changes since l, and the first one's
// position.
func checkpointChanges(l *ledger.Record, cur *checkpoint.Checkpoint) (changes []string, pos checkpoint.Pos) {
	pos = cur.Pos
	note := func(p checkpoint.Pos, format string, args ...any) {
		if len(changes) == 0 {
			pos = p
		}
		changes = append(changes, fmt.Sprintf(format, args...))
	}
	if cur.Version.Set && cur.Version.Value != l.Version {
		note(cur.Version.Pos, "version %d → %d", l.Version, cur.Version.Value)
	}
	if cur.Issue.Set && cur.Issue.Value != l.CheckpointIssue {
		note(cur.Issue.Pos, "issue %d → %d", l.CheckpointIssue, cur.Issue.Value)
	}
	b := cur.Budget
	if b.Consumed.Set && b.Consumed.Value < l.Consumed {
		note(b.Consumed.Pos, "budget.consumed went down %d → %d", l.Consumed, b.Consumed.Value)
	}
	if b.Total.Set && b.Total.Value > l.Total {
		note(b.Total.Pos, "budget.total went up %d → %d", l.Total, b.Total.Value)
	}
	if b.Remaining.Set && b.Remaining.Value > l.Remaining {
		note(b.Remaining.Pos, "budget.remaining went up %d → %d", l.Remaining, b.Remaining.Value)
	}
	return changes, pos
}

// tamperedFinding says since when, in how many edits, and the event's named
// editor.
func (e *decision) tamperedFinding(l *ledger.Record, pos checkpoint.Pos, changes []string) Violation {
	pv := e.cfg.Labels.PermissionViolation
	cv := e.in.Issue.ContentVersion
	since := fmt.Sprintf("since the guard accepted content version %d at %s", l.ContentVersion, time.Unix(l.Written, 0).UTC().Format(time.RFC3339))
	last := ""
	if ev := e.in.Event; ev.Name == "issues" && ev.Action == "edited" && ev.Sender != "" {
		// Information, not proof: a re-run replays an old payload.
		last = fmt.Sprintf(" (the event of this run names %s as the editor)", markdown.Quote(ev.Sender))
	}
	v := at(pos, "checkpoint", "the checkpoint was tampered with %s: %s, in %s (content version %d → %d)%s; whoever made them, only "+
		"an approver accepts such changes: a budget admin restores the body, or an approver checks it and removes %s to accept it",
		since, strings.Join(changes, "; "), editCount(cv-l.ContentVersion), l.ContentVersion, cv, last, pv)
	v.Label = pv
	return v
}

// judgeEntries fails a lost or changed accepted entry (judgeHistory).
func (e *decision) judgeEntries(l *ledger.Record, cur *checkpoint.Checkpoint) {
	problem := e.judgeHistory(l, prune.FromCheckpoint(cur.Entries()))
	if problem == "" {
		return
	}
	pv := e.cfg.Labels.PermissionViolation
	pos := cur.Pos
	if cur.HistoryTail.Set {
		pos = cur.HistoryTail.Pos
	} else if cur.History.Set {
		pos = cur.History.Pos
	}
	v := at(pos, "checkpoint.history_tail", "the history was tampered with since the guard accepted it: %s; restore the entries "+
		"(gns-guard history shows them), or an approver removes %s to accept the body as it is", problem, pv)
	v.Label = pv
	e.trust.tamper = append(e.trust.tamper, v)
}

// editCount says how many edits a content version moved by.
func editCount(n int) string {
	switch {
	case n <= 0:
		return "a change the content version does not show"
	case n == 1:
		return "one edit"
	}
	return fmt.Sprintf("%d edits", n)
}

// legalTransition is a new phase started by hand by the carryover rule of
// docs/contract.md §5: a new phase name, consumed 0, total = remaining <=
// floor(ledger remaining × carryover-ratio) + the phase grant the
// repository budget leaves (phaseGrant), version and issue unchanged.
func (e *decision) legalTransition(l *ledger.Record) bool {
	b := e.cp.Budget
	most := carried(l.Remaining, e.cfg.CarryoverRatio) + e.phaseGrant()
	return e.cp.Version.Value == l.Version && e.cp.Issue.Value == l.CheckpointIssue && e.cp.Phase.Value != l.Phase &&
		b.Consumed.Value == 0 && b.Total.Value == b.Remaining.Value && b.Total.Value <= most
}

// carried is what a new phase carries over of remaining.
func carried(remaining int64, ratio float64) int64 {
	return int64(math.Floor(float64(max(0, remaining)) * ratio))
}
