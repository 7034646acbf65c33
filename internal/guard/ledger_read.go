package guard

import (
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// readRecord reads the ledger record in the guard's status comment and
// judges it against the anchor and the issue: the trust's ledger is the
// record when it is trusted, its problem says why the record found (or
// the lack of one) cannot be trusted.
func (e *decision) readRecord() {
	t := &e.trust
	t.ledger, t.problem = ledger.ReadOnce(e.in.Record, e.in.Status, e.in.Issue.Number, ledger.ConfigKeys(e.cfg))
	anchor, problem, lags := e.judgeAnchor(t.ledger)
	t.anchor, t.lags = anchor, lags
	switch {
	case problem != "" && t.problem == "":
		t.problem, t.ledger = problem, nil
	case t.ledger != nil && t.ledger.Repo != 0 && e.in.Issue.RepoID != 0 && t.ledger.Repo != e.in.Issue.RepoID:
		t.problem = fmt.Sprintf("the ledger record in comment %d belongs to repository %d, not this one (%d): someone copied it here",
			e.in.Status.ID, t.ledger.Repo, e.in.Issue.RepoID)
		t.ledger = nil
	case e.in.Status == nil && e.hasTraces():
		t.problem = "the guard's status comment, which holds its ledger, is gone although the guard has worked on this issue before: someone deleted it"
	case e.in.Status == nil && e.in.Unreached:
		t.problem = "the guard's status comment, which holds its ledger, is not within the timeline entries a run reads (a flood of " +
			"events buried it, or this is the guard's first run on a long issue): the guard adopts no state it cannot check"
	}
	e.plan.RecordTrusted = t.ledger != nil && t.problem == ""
	e.plan.AnchorLags = e.plan.RecordTrusted && t.lags
}

// hasTraces: a guard comment with its marker for this issue, or a label
// change it made.
func (e *decision) hasTraces() bool {
	if e.in.Self == "" {
		return false
	}
	prefix := "<!-- gns-guard:"
	issue := fmt.Sprintf(" issue=%d", e.in.Issue.Number)
	for _, cs := range [][]issues.Comment{e.in.Recent, e.in.Older} {
		for _, c := range cs {
			if c.Author == e.in.Self && strings.Contains(c.Body, prefix) && strings.Contains(c.Body, issue) {
				return true
			}
		}
	}
	for _, le := range e.in.LabelEvents {
		if le.Actor == e.in.Self {
			return true
		}
	}
	return false
}
