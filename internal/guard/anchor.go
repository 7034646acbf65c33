package guard

import (
	"fmt"
	"slices"
	"time"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// judgeAnchor checks the ledger record found (l, from the status comment
// found, nil for none) against the issue's anchor. It returns the anchor
// (nil when there is none or it is not the guard's), a problem that makes
// the record untrusted, and whether the record is newer than the anchor
// (its last write failed).
func (e *decision) judgeAnchor(l *ledger.Record) (a *ledger.Anchor, problem string, lags bool) {
	st := e.in.Anchor
	if !st.Known || st.Text == "" {
		return nil, "", false
	}
	n := e.in.Issue.Number
	a, problem = ledger.ReadAnchor(st.Text, e.in.Issue.RepoID, n, ledger.ConfigKeys(e.cfg))
	if problem != "" {
		return nil, problem, false
	}
	status := e.in.Status
	switch {
	case status == nil:
		return a, fmt.Sprintf("the guard's status comment, which holds its ledger, is gone, although its anchor (the repository "+
			"variable %s) seals record %d in comment %d: someone deleted it",
			ledger.AnchorName(n), a.Seq, a.Status), false
	case l == nil:
		return a, "", false // the record's own problem is reported
	case l.Seq < a.Seq:
		return a, fmt.Sprintf("the ledger record in comment %d is record %d, older than record %d the guard wrote last (its anchor, the "+
			"repository variable %s, says so): someone put back an old copy of the guard's comment",
			status.ID, l.Seq, a.Seq, ledger.AnchorName(n)), false
	case l.Seq == a.Seq && ledger.RecordHash(ledger.Line(status.Body)) != a.Record:
		return a, fmt.Sprintf("the ledger record in comment %d is not the record %d its anchor (the repository variable %s) seals: someone replaced it",
			status.ID, a.Seq, ledger.AnchorName(n)), false
	case l.Seq == a.Seq && status.ID != a.Status:
		return a, fmt.Sprintf("the ledger record in comment %d belongs in comment %d, as its anchor (the repository variable %s) says: "+
			"someone copied the guard's comment",
			status.ID, a.Status, ledger.AnchorName(n)), false
	}
	return a, "", l.Seq > a.Seq
}

// hasAnchor reports whether the issue has an anchor: the guard has governed
// it, so it stays governed whatever its body and labels say now (an agent
// that deletes the checkpoint and the governance labels switches nothing
// off, docs/contract.md#4b-the-trusted-ledger).
func hasAnchor(in Input) bool { return in.Anchor.Known && in.Anchor.Text != "" }

// NextAnchor is the anchor a run leaves after writing the record line
// into the status comment status (as the server answered the write), the
// comments of the issue being recent (the last ones, oldest first, the
// status comment among them or not) and first saying they are all of them.
func NextAnchor(in Input, seq int64, line string, status issues.Comment, recent []issues.Comment, first bool) ledger.Anchor {
	tail := lastN(recent, in.Config.RecentWindow())
	a := ledger.Anchor{Repo: in.Issue.RepoID, Issue: in.Issue.Number, Seq: seq, Record: ledger.RecordHash(line), Status: status.ID,
		First: first && len(tail) == len(recent)}
	since := status.UpdatedAt
	for _, c := range tail {
		a.Tail = append(a.Tail, c.ID)
		if c.UpdatedAt.Before(since) && !c.UpdatedAt.IsZero() {
			since = c.UpdatedAt
		}
	}
	a.Since = since.Add(-time.Second).Unix()
	return a
}

// LabelsMoved reports whether the issue's governance labels differ from
// those the record accepted (by id and name; an ordinary label renamed
// into a governance name among them), or an approval label it holds
// pending is off: the run must read who changed them.
func LabelsMoved(l *ledger.Record, is issues.Issue, cfg config.Config) bool {
	e := &decision{cfg: cfg, in: Input{Issue: is}}
	names := is.LabelNames()
	accepted := slices.DeleteFunc(slices.Clone(l.Labels), func(x issues.Label) bool { return !e.governs(x.Name) })
	if !slices.Equal(e.governanceLabels(names), accepted) {
		return true
	}
	for _, p := range l.Pending {
		if !slices.Contains(names, p) {
			return true
		}
	}
	return false
}

// anchorFloor keeps the sequence of the next record above the anchor's:
// a record written after one the anchor sealed was lost (deleted, or put
// back to an older copy) is newer than the anchor, never taken for a
// replay.
func (e *decision) anchorFloor(l *ledger.Record) {
	if a := e.trust.anchor; a != nil && l.Seq < a.Seq {
		l.Seq = a.Seq
	}
}

func lastN(cs []issues.Comment, k int) []issues.Comment {
	if len(cs) <= k {
		return cs
	}
	return cs[len(cs)-k:]
}
