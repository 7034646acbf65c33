package guard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// recordLedger sets the record the status comment carries after this run:
// the state as accepted now, or the last trusted one kept. A tampered
// state never becomes the baseline; with permission::violation pending the
// baseline does not move; a first state is adopted only with no violation
// label on.
func (e *decision) recordLedger() {
	after := e.labelsAfter()
	pending := e.pendingAfter(after)
	if !e.mayAccept(after, pending) {
		e.keepRecord(after, pending)
	} else {
		e.planHint(pending)
		e.acceptState(after, pending)
	}
	if len(pending) > 0 {
		// The approval waits for a person: bind the flagged state.
		e.plan.Ledger.Flag = e.flagAfter(after)
	}
	e.planGrants()
	if l := e.plan.Ledger; l != nil && e.asOpened() && !e.in.Issue.NoCAS {
		_, cv, _ := e.acceptedCheckpointVersion()
		e.plan.Opened = cv
	}
}

// pendingAfter are the approval labels left after this run.
func (e *decision) pendingAfter(after []string) []string {
	pending := []string{}
	for _, l := range e.cfg.Labels.Approval() {
		if slices.Contains(after, l) {
			pending = append(pending, l)
		}
	}
	return pending
}

// mayAccept reports whether this run accepts the checkpoint as the
// baseline: it is valid and not tampered with (nor over the budget cap),
// permission::violation stays on only when an approver removed it now (a
// rule put it back), and a first state waits while a violation label is on.
func (e *decision) mayAccept(after, pending []string) bool {
	t := &e.trust
	n := e.cfg.Labels
	tampered := slices.ContainsFunc(e.plan.Violations, func(v Violation) bool {
		return v.Rule == RuleTampered || v.Rule == RuleBudgetOverCap || v.Rule == RuleRepositoryBudget
	})
	_, approvedNow := t.approved[n.PermissionViolation]
	switch {
	case e.cp == nil || tampered || e.plan.ChainForked:
		return false
	case slices.Contains(after, n.PermissionViolation) && !approvedNow:
		return false
	case (t.ledger == nil || !t.ledger.Baseline) && len(pending) > 0:
		return false // never adopt a state while a violation label is on
	}
	return true
}

// keepRecord carries the last trusted state on, updating this run's details.
func (e *decision) keepRecord(after, pending []string) {
	t := &e.trust
	l := ledger.Record{Issue: e.in.Issue.Number}
	if t.ledger != nil {
		l = *t.ledger
	}
	l.Pending = pending
	l.Writer = e.in.Self
	l.Config, l.Posture, l.Access = e.in.ConfigStamp, e.in.Posture, e.access
	l.Repo = e.in.Issue.RepoID
	if t.ledger == nil {
		l.Labels = e.labelsByID(after)
	} else {
		l.Labels = e.withPending(l.Labels, pending)
	}
	if !l.Baseline {
		l.ContentVersion = e.keptVersion(&l)
	}
	if len(e.plan.Missing) == 0 && len(e.plan.AskComments) == 0 {
		// A result gone stays found, so the count holds.
		e.recordSeen(&l)
	}
	e.recordChain(&l)
	e.anchorFloor(&l)
	e.plan.Ledger = &l
}

// acceptState makes the checkpoint as left (pruned, if so) the baseline.
func (e *decision) acceptState(after, pending []string) {
	t := &e.trust
	cp, cv, pruned := e.acceptedCheckpoint()
	l := &ledger.Record{
		Issue:           e.in.Issue.Number,
		Baseline:        true,
		Version:         cp.Version.Value,
		CheckpointIssue: cp.Issue.Value,
		Phase:           cp.Phase.Value,
		Total:           cp.Budget.Total.Value,
		Consumed:        cp.Budget.Consumed.Value,
		Remaining:       cp.Budget.Remaining.Value,
		ContentVersion:  cv,
		Pending:         pending,
		Writer:          e.in.Self,
		Config:          e.in.ConfigStamp,
		Posture:         e.in.Posture,
		Access:          e.access,
		Repo:            e.in.Issue.RepoID,
		Labels:          e.labelsByID(after),
	}
	if t.ledger != nil {
		l.Seq = t.ledger.Seq
	}
	e.anchorFloor(l)
	e.recordChain(l)
	e.recordEntries(l, cp, pruned)
	e.recordResults(l, pruned)
	e.recordTask(l)
	e.recordBurn(l, pruned)
	e.recordLimits(l, after)
	e.recordAdoption(l)
	e.recordGrant(l)
	e.plan.Adopted = t.ledger == nil || !t.ledger.Baseline
	e.plan.Ledger = l
}

// withPending are the accepted labels of a record kept, with the approval
// labels now pending by id (the ids of the issue's labels, 0 for one this
// run adds): whose removal approves, and who removed it, is judged by
// label id, whatever label is renamed to that name since.
func (e *decision) withPending(accepted []issues.Label, pending []string) []issues.Label {
	approval := e.cfg.Labels.Approval()
	out := slices.DeleteFunc(slices.Clone(accepted), func(l issues.Label) bool { return slices.Contains(approval, l.Name) })
	out = append(out, e.labelsByID(pending)...)
	slices.SortFunc(out, func(a, b issues.Label) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// acceptedCheckpointVersion: no valid checkpoint, so the version after this
// run.
func (e *decision) acceptedCheckpointVersion() (*checkpoint.Checkpoint, int, bool) {
	cv := e.in.Issue.ContentVersion
	if e.plan.Prune != nil && e.cp != nil {
		return e.acceptedCheckpoint()
	}
	if e.writesBody() {
		cv++
	}
	return nil, cv, false
}

// acceptedCheckpoint is the checkpoint this run accepts and the body's
// content version with it: the pruned body's when this run prunes (its
// write moves the version on by one, and pruned is true), else the body's
// (one version on when this run sets the placeholder issue number, or
// writes the read hint).
func (e *decision) acceptedCheckpoint() (cp *checkpoint.Checkpoint, cv int, pruned bool) {
	cp, cv = e.cp, e.in.Issue.ContentVersion
	if pr := e.plan.Prune; pr != nil {
		if pc := prunedCheckpoint(pr.Body, e.cfg); pc != nil {
			return pc, cv + 1, true
		}
	}
	if e.writesBody() {
		cv++
	}
	return cp, cv, false
}

// recordLimits records the cascade limit and size after this run.
func (e *decision) recordLimits(l *ledger.Record, after []string) {
	n := e.cfg.Labels
	for _, c := range cascadeLabels(after, n) {
		// Under a conflict, the most permissive was accepted.
		if l.DepthLimit == "" || depthRank(c.text, e.cfg) > depthRank(l.DepthLimit, e.cfg) {
			l.DepthLimit = c.text
		}
	}
	if s, ok := issues.SizeFromLabels(after, n.SizePrefix); ok {
		l.Size = s.Name
	}
}

// recordAdoption: a first baseline is adopted, and stays so until the
// baseline moves.
func (e *decision) recordAdoption(l *ledger.Record) {
	old := e.trust.ledger
	if old == nil || !old.Baseline {
		l.Adopted = true
		return
	}
	l.Adopted = old.Adopted
	prev := *old
	prev.Config, prev.Posture, prev.Access = l.Config, l.Posture, l.Access // a new commit is not a new state
	if !l.SameState(prev) {
		l.Adopted = false // the baseline moved on from the adopted state
	}
}

// governanceLabels are the governance labels among names (cascade::,
// size::, the approval labels, permission::evolve-system), with the ids
// of the issue's labels (0 for a label this run adds: the shell learns
// its id when it adds it).
func (e *decision) governanceLabels(names []string) []issues.Label {
	return slices.DeleteFunc(e.labelsByID(names), func(l issues.Label) bool { return !e.governs(l.Name) })
}

// labelsByID are every label among names, with the ids of the issue's
// labels (0 for a label this run adds), sorted by name: the record keeps
// them all, so that an ordinary label renamed into a governance name
// shows as a rename.
func (e *decision) labelsByID(names []string) []issues.Label {
	out := make([]issues.Label, 0, len(names))
	for _, name := range names {
		l := issues.Label{Name: name}
		for _, x := range e.in.Issue.Labels {
			if x.Name == name {
				l.ID = x.ID
			}
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b issues.Label) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// governs: cascade, size, approval labels and permission::evolve-system.
func (e *decision) governs(name string) bool {
	n := e.cfg.Labels
	return strings.HasPrefix(name, n.CascadePrefix) && name != n.DepthExceeded ||
		strings.HasPrefix(name, n.SizePrefix) || name == n.EvolveSystem || slices.Contains(n.Approval(), name)
}

// recordEntries commits to every entry accepted, archived or in cp.
func (e *decision) recordEntries(l *ledger.Record, cp *checkpoint.Checkpoint, pruned bool) {
	var h string
	var n int
	if old := e.trust.ledger; old != nil && old.Baseline {
		h, n = e.archivedPrefix(old)
	} else if n = e.archiveChain().count; n > 0 {
		h = legacyArchived(n) // the chain as found, before this run's prune
	}
	if pr := e.plan.Prune; pruned && pr != nil {
		h, n = ledger.HistoryHash(h, pr.Archived), n+len(pr.Archived)
	}
	body := prune.FromCheckpoint(cp.Entries())
	l.ArchivedHash = h
	l.Entries = n + len(body)
	l.EntriesHash = ledger.HistoryHash(h, body)
}

// legacyArchived stands in when only the count is known.
func legacyArchived(n int) string {
	return fmt.Sprintf("%d entries archived before the ledger kept the history", n)
}

// labelsAfter are the labels once this run's writes are made.
func (e *decision) labelsAfter() []string {
	out := slices.DeleteFunc(e.in.Issue.LabelNames(), func(x string) bool {
		return slices.ContainsFunc(e.plan.RemoveLabels, func(l issues.Label) bool { return l.Name == x })
	})
	for _, a := range e.plan.AddLabels {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// LearnLabelIDs fills added labels' ids (0) from the server's answer
// (after).
func LearnLabelIDs(l *ledger.Record, after []issues.Label) {
	for i, x := range l.Labels {
		if x.ID != 0 {
			continue
		}
		for _, y := range after {
			if y.Name == x.Name {
				l.Labels[i].ID = y.ID
			}
		}
	}
}

// recordTask sets the task the record accepts: the body's task section
// and the title as they are (a change only an approver made, or one an
// approver accepted by removing permission::violation), since when the
// last record accepted them, else since now.
func (e *decision) recordTask(l *ledger.Record) {
	l.Task, l.Title = TaskDigest(e.in.Issue.Body), TitleDigest(e.in.Issue.Title)
	l.TaskSince = e.in.Now.Unix()
	if old := e.trust.ledger; old != nil && old.Task == l.Task && old.Title == l.Title {
		l.TaskSince = old.TaskSince
	}
}
