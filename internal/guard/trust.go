package guard

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// trust is what a decision knows about the ledger and the approvals of
// this run (docs/contract.md §4b).
type trust struct {
	ledger  *ledger.Record // the verified record, nil when none could be trusted
	problem string         // why the record cannot be trusted, "" when it can (or there is none)
	// approved maps an approval label removed by an approver to who did it.
	approved map[string]string
	// restore are approval labels removed by someone not allowed to: they
	// go back on.
	restore []removal
	// relaxed are labels that relax a rule, added by someone not allowed
	// to: they take no effect and are removed.
	relaxed []removal
	// removed are accepted limits (a cascade or size label) removed by
	// someone not allowed to, where that relaxes the rule: they go back.
	removed []removal
	// renamed are governance labels renamed since the ledger accepted them.
	renamed []rename
	// tamper are the checkpoint-tampered findings of this run.
	tamper []Violation
	// anchor is the issue's anchor as found (nil: none, or not the
	// guard's); lags says the record is newer than it (its write failed).
	anchor *ledger.Anchor
	lags   bool
}

// removal is a label change and who made it ("" when unknown).
type removal struct{ label, actor string }

// approverRule says who may approve, for messages.
func (e *eval) approverRule() string {
	if len(e.cfg.BudgetAdmins) > 0 {
		return "not in budget-admins"
	}
	return "not a repository admin (budget-admins is empty)"
}

// isApprover reports whether user may approve: a budget admin, or, when
// budget-admins is empty, the repository's owner or a repository admin.
// When the answer needs the server, it asks the shell for it
// (Plan.AskAdmin) and says no for now.
func (e *eval) isApprover(user string) bool {
	if user == "" {
		return false
	}
	if len(e.cfg.BudgetAdmins) > 0 {
		return slices.Contains(e.cfg.BudgetAdmins, user)
	}
	if user == e.in.Issue.RepoOwner {
		return true // the repository's owner: no question to ask
	}
	admin, known := e.in.Admins[user]
	if !known && e.plan.AskAdmin == "" {
		e.plan.AskAdmin = user
	}
	return admin
}

// who names an actor in a message.
func who(actor string) string {
	if actor == "" {
		return "someone the guard could not identify (the run for that change was replaced or missed, and the timeline it read does not show it)"
	}
	return issues.Quote(actor)
}

// actorOf finds who made a label change: the newest matching entry of the
// timeline read (by the label's id when known: a renamed label shows its
// new name on old entries), made after the ledger was written. The event's
// sender proves nothing: any writer can re-run an old run, which hands the
// step that run's payload again.
func (e *eval) actorOf(label issues.Label, added bool) string {
	var since time.Time
	if l := e.trust.ledger; l != nil {
		since = time.Unix(l.Written, 0)
	}
	for i := len(e.in.LabelEvents) - 1; i >= 0; i-- {
		le := e.in.LabelEvents[i]
		same := le.Label == label.Name
		if label.ID != 0 && le.LabelID != 0 {
			same = le.LabelID == label.ID
		}
		if !same || le.Added != added {
			continue
		}
		if le.At.Before(since) {
			return "" // the newest such change is older than the ledger
		}
		return le.Actor
	}
	return ""
}

// judgeLabels reads the ledger and judges the label changes since it, by
// label id and from the timeline: a governance label renamed, an approval
// label removed, a relaxing label added, an accepted limit removed. It
// sets the effective labels every rule judges: renamed labels keep their
// accepted names, restored labels are on, unapproved relaxing labels off.
func (e *eval) judgeLabels() {
	t := &e.trust
	t.ledger, t.problem = ledger.Read(e.in.Status, e.in.Issue.Number, ledger.ConfigKeys(e.cfg))
	anchor, problem, lags := e.judgeAnchor(t.ledger)
	t.anchor, t.lags = anchor, lags
	switch {
	case problem != "" && t.problem == "":
		t.problem, t.ledger = problem, nil
	case t.ledger != nil && t.ledger.Repo != 0 && e.in.Issue.RepoID != 0 && t.ledger.Repo != e.in.Issue.RepoID:
		t.problem = fmt.Sprintf("the ledger record in comment %d belongs to repository %d, not this one (%d): someone copied it here", e.in.Status.ID, t.ledger.Repo, e.in.Issue.RepoID)
		t.ledger = nil
	case e.in.Status == nil && e.hasTraces():
		t.problem = "the guard's status comment, which holds its ledger, is gone although the guard has worked on this issue before: someone deleted it"
	case e.in.Status == nil && e.in.Unreached:
		t.problem = "the guard's status comment, which holds its ledger, is not within the timeline entries a run reads (a flood of events buried it, or this is the guard's first run on a long issue): the guard adopts no state it cannot check"
	}
	e.plan.RecordTrusted = t.ledger != nil && t.problem == ""
	e.plan.AnchorLags = e.plan.RecordTrusted && t.lags
	live := slices.Clone(e.in.Issue.Labels)
	var accepted []issues.Label
	var pending []string
	if l := t.ledger; l != nil {
		accepted, pending = l.Labels, l.Pending
	}
	// A label keeps the name it had when accepted, whatever it was renamed
	// to since (who renamed it does not show on the issue).
	for i, l := range live {
		for _, a := range accepted {
			if a.ID != 0 && a.ID == l.ID && a.Name != l.Name {
				t.renamed = append(t.renamed, rename{id: l.ID, from: a.Name, to: l.Name})
				live[i].Name = a.Name
			}
		}
	}
	names := issues.NamesOf(live)
	for _, label := range e.cfg.Labels.Approval() {
		if slices.Contains(names, label) || !slices.Contains(pending, label) {
			continue
		}
		actor := e.actorOf(labelNamed(accepted, label), false)
		if e.isApprover(actor) {
			t.approved[label] = actor
			continue
		}
		t.restore = append(t.restore, removal{label, actor})
	}
	if _, ok := t.approved[e.cfg.Labels.PermissionViolation]; ok {
		// An approver accepted the issue as it is: its labels' new names
		// included.
		t.renamed = nil
		live = slices.Clone(e.in.Issue.Labels)
		names = issues.NamesOf(live)
	}
	if l := t.ledger; l != nil && l.Baseline {
		e.judgeRelaxing(live, l)
		e.judgeRemoved(live, l)
	}
	eff := slices.Clone(names)
	for _, r := range t.relaxed {
		eff = slices.DeleteFunc(eff, func(x string) bool { return x == r.label })
	}
	if l := t.ledger; l != nil && len(t.relaxed) > 0 {
		// The accepted limits stay in effect: put their labels back when
		// the relaxing ones replaced them.
		n := e.cfg.Labels
		if l.DepthLimit != "" && len(cascadeLabels(eff, n)) == 0 && !restoring(t.restore, n.CascadePrefix+l.DepthLimit) {
			t.restore = append(t.restore, removal{n.CascadePrefix + l.DepthLimit, ""})
		}
		if _, ok := issues.SizeFromLabels(eff, n.SizePrefix); l.Size != "" && !ok && !restoring(t.restore, n.SizePrefix+l.Size) {
			t.restore = append(t.restore, removal{n.SizePrefix + l.Size, ""})
		}
	}
	for _, r := range t.restore {
		if !slices.Contains(eff, r.label) {
			eff = append(eff, r.label)
		}
	}
	e.labels = eff
}

// rename is a governance label whose definition was renamed since the
// ledger accepted it.
type rename struct {
	id       int64
	from, to string
}

// labelNamed is the accepted label of that name (its id), or the name
// alone.
func labelNamed(accepted []issues.Label, name string) issues.Label {
	for _, a := range accepted {
		if a.Name == name {
			return a
		}
	}
	return issues.Label{Name: name}
}

func restoring(rs []removal, label string) bool {
	return slices.ContainsFunc(rs, func(r removal) bool { return r.label == label })
}

// judgeRelaxing finds labels added since the ledger that relax a rule: a
// higher cascade limit, a larger task size. They count only when an
// approver added them (the timeline says who, by label id).
func (e *eval) judgeRelaxing(live []issues.Label, l *ledger.Record) {
	accepted := depthRank(l.DepthLimit, e.cfg)
	names := issues.NamesOf(live)
	for _, c := range cascadeLabels(names, e.cfg.Labels) {
		if depthRank(c.text, e.cfg) <= accepted {
			continue
		}
		if actor := e.actorOf(labelIn(live, c.name), true); !e.isApprover(actor) {
			e.trust.relaxed = append(e.trust.relaxed, removal{c.name, actor})
		}
	}
	// Without a size label the size is inferred from the estimate: only a
	// label larger than both relaxes anything.
	acceptedSize := issues.SizeRank(l.Size)
	if e.cp != nil {
		if s, ok := issues.SizeFromEstimate(e.cp.NextEstimatedTokens.Value); ok {
			acceptedSize = max(acceptedSize, issues.SizeRank(s.Name))
		}
	}
	for _, name := range names {
		rest, ok := strings.CutPrefix(name, e.cfg.Labels.SizePrefix)
		if !ok || issues.SizeRank(rest) <= acceptedSize {
			continue
		}
		if actor := e.actorOf(labelIn(live, name), true); !e.isApprover(actor) {
			e.trust.relaxed = append(e.trust.relaxed, removal{name, actor})
		}
	}
}

// judgeRemoved finds the accepted cascade or size label removed since the
// ledger when that relaxes the limit (the default-max-depth allows more,
// the size inferred from the estimate is larger): it counts only when an
// approver removed it; otherwise the accepted label goes back on.
func (e *eval) judgeRemoved(live []issues.Label, l *ledger.Record) {
	n := e.cfg.Labels
	names := issues.NamesOf(live)
	for _, a := range l.Labels {
		if slices.ContainsFunc(live, func(x issues.Label) bool { return x.ID == a.ID && a.ID != 0 || x.Name == a.Name }) {
			continue
		}
		relaxes := false
		if rest, ok := strings.CutPrefix(a.Name, n.CascadePrefix); ok && a.Name != n.DepthExceeded {
			now := -1
			if cs := cascadeLabels(names, n); len(cs) > 0 {
				now = depthRank(cs[0].text, e.cfg)
			} else {
				now = depthRank("", e.cfg)
			}
			relaxes = now > depthRank(rest, e.cfg)
		}
		if rest, ok := strings.CutPrefix(a.Name, n.SizePrefix); ok {
			now := -1
			if s, ok := issues.SizeFromLabels(names, n.SizePrefix); ok {
				now = issues.SizeRank(s.Name)
			} else if e.cp != nil {
				if s, ok := issues.SizeFromEstimate(e.cp.NextEstimatedTokens.Value); ok {
					now = issues.SizeRank(s.Name)
				}
			}
			relaxes = now > issues.SizeRank(rest)
		}
		if !relaxes {
			continue
		}
		if actor := e.actorOf(a, false); !e.isApprover(actor) {
			e.trust.removed = append(e.trust.removed, removal{a.Name, actor})
			e.trust.restore = append(e.trust.restore, removal{a.Name, actor})
		}
	}
}

// labelIn is the live label of that name (its id), or the name alone.
func labelIn(live []issues.Label, name string) issues.Label {
	for _, l := range live {
		if l.Name == name {
			return l
		}
	}
	return issues.Label{Name: name}
}

// depthRank orders cascade limits by how much they allow: none (and no
// default) allows nothing, n allows everything.
func depthRank(limit string, cfg issues.Config) int {
	switch {
	case limit == "n" || limit == "N":
		return math.MaxInt
	case limit == "":
		if cfg.DefaultMaxDepth == nil {
			return -1
		}
		if *cfg.DefaultMaxDepth == issues.Unlimited {
			return math.MaxInt
		}
		return *cfg.DefaultMaxDepth
	}
	var n int
	if _, err := fmt.Sscanf(limit, "%d", &n); err != nil {
		return -1
	}
	return n
}

// hasTraces reports whether the issue shows the guard's earlier work on
// it: a comment of its own with one of its markers for this issue, or a
// label change it made.
func (e *eval) hasTraces() bool {
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

// judgeCheckpoint compares the live checkpoint with the ledger: the
// version and issue never change, consumed never goes down, total and
// remaining never go up — but by a legal phase transition or an edit an
// approver made — and a record that cannot be trusted is tampering too.
// A person's approval (an approver removed permission::violation in this
// run) accepts the state as it is.
func (e *eval) judgeCheckpoint() {
	t := &e.trust
	if _, ok := t.approved[e.cfg.Labels.PermissionViolation]; ok {
		return
	}
	pv := e.cfg.Labels.PermissionViolation
	if t.problem != "" {
		v := at(e.blockPos(), "", "%s; the guard keeps its last trusted state and fails every run until an approver removes %s", t.problem, pv)
		v.Label = pv
		t.tamper = append(t.tamper, v)
		return
	}
	l := t.ledger
	cur := e.cp
	if cur == nil && e.parsed.Block() != nil {
		cur = e.parsed.Checkpoint // invalid, but what it says still counts
	}
	if l == nil || !l.Baseline || cur == nil {
		return
	}
	var changes []string
	pos := cur.Pos
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
	if len(changes) == 0 || (e.cp != nil && e.legalTransition(l)) {
		e.judgeEntries(l, cur)
		return
	}
	cv := e.in.Issue.ContentVersion
	since := fmt.Sprintf("since the guard accepted content version %d at %s", l.ContentVersion, time.Unix(l.Written, 0).UTC().Format(time.RFC3339))
	last := ""
	if ev := e.in.Event; ev.Name == "issues" && ev.Action == "edited" && ev.Sender != "" {
		// Information, not proof: a re-run hands the step an old payload.
		last = fmt.Sprintf(" (the event of this run names %s as the editor)", issues.Quote(ev.Sender))
	}
	v := at(pos, "checkpoint", "the checkpoint was tampered with %s: %s, in %s (content version %d → %d)%s; whoever made them, only an approver accepts such changes: a budget admin restores the body, or an approver checks it and removes %s to accept it",
		since, strings.Join(changes, "; "), editCount(cv-l.ContentVersion), l.ContentVersion, cv, last, pv)
	v.Label = pv
	t.tamper = append(t.tamper, v)
	e.judgeEntries(l, cur)
}

// judgeEntries fails a checkpoint that lost or changed an accepted history
// entry (judgeHistory).
func (e *eval) judgeEntries(l *ledger.Record, cur *checkpoint.Checkpoint) {
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
	v := at(pos, "checkpoint.history_tail", "the history was tampered with since the guard accepted it: %s; restore the entries (gns-guard history shows them), or an approver removes %s to accept the body as it is", problem, pv)
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

// legalTransition is a new phase started by the carryover rule of docs/contract.md §5:
// consumed 0, total = remaining <= floor(ledger remaining × carryover-ratio)
// + phase-grant, version and issue unchanged.
func (e *eval) legalTransition(l *ledger.Record) bool {
	b := e.cp.Budget
	most := int64(math.Floor(float64(l.Remaining)*e.cfg.CarryoverRatio)) + e.cfg.PhaseGrant
	return e.cp.Version.Value == l.Version && e.cp.Issue.Value == l.CheckpointIssue &&
		b.Consumed.Value == 0 && b.Total.Value == b.Remaining.Value && b.Total.Value <= most
}

// recordLedger sets the record the status comment carries after this run:
// the state as accepted now, or the last trusted one kept. A tampered
// state never becomes the baseline; with permission::violation pending the
// baseline does not move; a first state is adopted only with no violation
// label on.
func (e *eval) recordLedger() {
	t := &e.trust
	n := e.cfg.Labels
	after := e.labelsAfter()
	pending := []string{}
	for _, l := range n.Approval() {
		if slices.Contains(after, l) {
			pending = append(pending, l)
		}
	}
	keep := func() {
		l := ledger.Record{Issue: e.in.Issue.Number}
		if t.ledger != nil {
			l = *t.ledger
		}
		l.Pending = pending
		l.Writer = e.in.Self
		l.Config = e.in.ConfigStamp
		l.Repo = e.in.Issue.RepoID
		if t.ledger == nil {
			l.Labels = e.governanceLabels(after)
		}
		e.recordChain(&l)
		e.anchorFloor(&l)
		e.plan.Ledger = &l
	}
	tampered := slices.ContainsFunc(e.plan.Violations, func(v Violation) bool { return v.Rule == RuleTampered || v.Rule == RuleBudgetOverCap })
	_, approvedNow := t.approved[n.PermissionViolation]
	switch {
	case e.cp == nil || tampered:
		keep()
		return
	case slices.Contains(after, n.PermissionViolation) && !approvedNow:
		keep()
		return
	case (t.ledger == nil || !t.ledger.Baseline) && len(pending) > 0:
		keep() // never adopt a state while a violation label is on
		return
	}
	cp, cv := e.cp, e.in.Issue.ContentVersion
	pruned := false
	if pr := e.plan.Prune; pr != nil {
		if pc := prunedCheckpoint(pr.Body, e.cfg); pc != nil {
			cp, cv, pruned = pc, cv+1, true
		}
	}
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
		Repo:            e.in.Issue.RepoID,
		Labels:          e.governanceLabels(after),
	}
	if t.ledger != nil {
		l.Seq = t.ledger.Seq
	}
	e.anchorFloor(l)
	e.recordChain(l)
	e.recordEntries(l, cp, pruned)
	e.recordBurn(l, pruned)
	for _, c := range cascadeLabels(after, n) {
		// With several (a conflict, failed by its own rule) the most
		// permissive is what was accepted.
		if l.DepthLimit == "" || depthRank(c.text, e.cfg) > depthRank(l.DepthLimit, e.cfg) {
			l.DepthLimit = c.text
		}
	}
	if s, ok := issues.SizeFromLabels(after, n.SizePrefix); ok {
		l.Size = s.Name
	}
	if t.ledger == nil || !t.ledger.Baseline {
		l.Adopted = true
	} else {
		l.Adopted = t.ledger.Adopted
		prev := *t.ledger
		prev.Config = l.Config // a new configuration commit is not a new state
		if !l.SameState(prev) {
			l.Adopted = false // the baseline moved on from the adopted state
		}
	}
	e.plan.Adopted = t.ledger == nil || !t.ledger.Baseline
	e.plan.Ledger = l
}

// governanceLabels are the governance labels among names (cascade::,
// size::, the approval labels, permission::evolve-system), with the ids
// of the issue's labels (0 for a label this run adds: the next record
// learns it).
func (e *eval) governanceLabels(names []string) []issues.Label {
	n := e.cfg.Labels
	var out []issues.Label
	for _, name := range names {
		gov := strings.HasPrefix(name, n.CascadePrefix) && name != n.DepthExceeded ||
			strings.HasPrefix(name, n.SizePrefix) || name == n.EvolveSystem || slices.Contains(n.Approval(), name)
		if !gov {
			continue
		}
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

// recordEntries sets the history the record commits to: every entry
// accepted, archived or in the body (cp, pruned by this run when pruned).
func (e *eval) recordEntries(l *ledger.Record, cp *checkpoint.Checkpoint, pruned bool) {
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

// legacyArchived stands in for the hash of entries archived before the
// ledger kept the history: only their count is known.
func legacyArchived(n int) string {
	return fmt.Sprintf("%d entries archived before the ledger kept the history", n)
}

// labelsAfter are the issue's labels once this run's label writes are made.
func (e *eval) labelsAfter() []string {
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
