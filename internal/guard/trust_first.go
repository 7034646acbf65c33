package guard

import (
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// A first state relaxes nothing (docs/ledger.md#a-first-state): the guard
// adopts it without an approver only as the issue was opened — its body
// never edited since — and a new issue's cascade label allows no more
// depth than default-max-depth unless an approver set it.

// firstState: no trusted baseline, and no approver accepted the issue as is.
func (e *decision) firstState() bool {
	t := &e.trust
	if t.problem != "" || (t.ledger != nil && t.ledger.Baseline) {
		return false
	}
	_, approved := t.approved[e.cfg.Labels.PermissionViolation]
	return !approved
}

// openedVersion is 0, or the first record's (the guard's fill moves it).
func (e *decision) openedVersion() int {
	if l := e.trust.ledger; l != nil {
		return l.ContentVersion
	}
	return 0
}

// asOpened: the content version has not moved; without versions, trust the
// event.
func (e *decision) asOpened() bool {
	is := e.in.Issue
	if is.NoCAS {
		return e.in.Event.Name == "issues" && e.in.Event.Action == "opened"
	}
	return is.ContentVersion <= e.openedVersion()
}

// judgeFirstEdit holds a first state whose checkpoint was edited in after
// the issue was opened: an ordinary issue that gains a checkpoint waits for
// an approver. A first state the guard flagged for an approver is bound
// already: an edit after the flag is judged anew when the approver acts.
func (e *decision) judgeFirstEdit() {
	if l := e.trust.ledger; l != nil && (l.Flag != nil && len(l.Pending) > 0 || e.inFirstRun(l)) {
		return
	}
	if !e.firstState() || e.checkpointAsWritten() == nil || e.asOpened() {
		return
	}
	// An approver saved this body in the edit's run.
	if ed := e.bodyEditor(func(saved string) bool { return saved == e.in.Issue.Body }); e.isApprover(ed) {
		return
	}
	pv := e.cfg.Labels.PermissionViolation
	v := at(e.blockPos(), "", "the guard has no accepted state for this issue, and its body was edited since it was opened (content "+
		"version %d → %d): the guard adopts a first state without an approver only as the issue was opened; an approver (%s) checks the "+
		"checkpoint and removes %s to accept it",
		e.openedVersion(), e.in.Issue.ContentVersion, e.cfg.Approvers(), pv)
	v.Label = pv
	e.trust.tamper = append(e.trust.tamper, v)
}

// judgeNewDepth finds, on a first state, cascade labels that allow more
// depth than default-max-depth, set by someone who is not an approver:
// they take no effect and go, as a relaxing label on an accepted state
// does.
func (e *decision) judgeNewDepth(live []issues.Label) {
	if e.cfg.DefaultMaxDepth == nil || !e.firstState() {
		return
	}
	limit := depthRank("", e.cfg)
	for _, c := range cascadeLabels(issues.NamesOf(live), e.cfg.Labels) {
		if depthRank(c.text, e.cfg) <= limit {
			continue
		}
		if actor := e.actorOf(labelIn(live, c.name), true); !e.isApprover(actor) {
			e.trust.relaxed = append(e.trust.relaxed, removal{label: c.name, actor: actor})
		}
	}
}

// keptVersion is the opened version, after this run's own fill.
func (e *decision) keptVersion(l *ledger.Record) int {
	if !e.asOpened() || e.in.Issue.NoCAS {
		return e.openedVersion()
	}
	cv := e.in.Issue.ContentVersion
	if e.writesBody() {
		cv++
	}
	if l.ContentVersion > cv {
		return l.ContentVersion
	}
	return cv
}

// inFirstRun reports whether record l is the placeholder of a first run
// still at work (or cut short) within unjudged-grace: the body ahead of it
// may be a concurrent first run's own write, not an edit
// (docs/choices.md#a-first-state).
func (e *decision) inFirstRun(l *ledger.Record) bool {
	return !l.Baseline && l.Labels == nil && l.Flag == nil && l.Written > 0 &&
		e.in.Now.Sub(time.Unix(l.Written, 0)) <= e.cfg.UnjudgedGrace
}
