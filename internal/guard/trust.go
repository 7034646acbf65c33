package guard

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
)

// trust is what a decision knows about the ledger and the approvals of
// this run (SPEC 4b).
type trust struct {
	ledger  *Ledger // the verified record, nil when none could be trusted
	problem string  // why the record cannot be trusted, "" when it can (or there is none)
	// approved maps an approval label removed by an approver to who did it.
	approved map[string]string
	// restore are approval labels removed by someone not allowed to: they
	// go back on.
	restore []removal
	// relaxed are labels that relax a rule, added by someone not allowed
	// to: they take no effect and are removed.
	relaxed []removal
	// tamper are the checkpoint-tampered findings of this run.
	tamper []Violation
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
// budget-admins is empty, a repository admin. When the answer needs the
// server, it asks the shell for it (Plan.AskAdmin) and says no for now.
func (e *eval) isApprover(user string) bool {
	if user == "" {
		return false
	}
	if len(e.cfg.BudgetAdmins) > 0 {
		return slices.Contains(e.cfg.BudgetAdmins, user)
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
	return quoteShort(actor)
}

// actorOf finds who made a label change: the event's sender when the event
// is that change, else the newest matching entry of the timeline read.
func (e *eval) actorOf(label string, added bool) string {
	ev := e.in.Event
	changed := ev.RemovedLabels
	if added {
		changed = ev.AddedLabels
	}
	if ev.Name == "issues" && slices.Contains(changed, label) {
		return ev.Sender
	}
	for i := len(e.in.LabelEvents) - 1; i >= 0; i-- {
		if le := e.in.LabelEvents[i]; le.Label == label && le.Added == added {
			return le.Actor
		}
	}
	return ""
}

// judgeLabels reads the ledger and judges the label changes since it: an
// approval label removed, a relaxing label added. It sets the effective
// labels every rule judges: restored approval labels are on, unapproved
// relaxing labels are off.
func (e *eval) judgeLabels() {
	t := &e.trust
	t.ledger, t.problem = ReadLedger(e.in.Status, e.in.Issue.Number, e.cfg.LedgerKey)
	switch {
	case e.in.Status == nil && e.hasTraces():
		t.problem = "the guard's status comment, which holds its ledger, is gone although the guard has worked on this issue before: someone deleted it"
	case e.in.Status == nil && e.in.Unreached:
		t.problem = "the guard's status comment, which holds its ledger, is not within the timeline entries a run reads (a flood of events buried it, or this is the guard's first run on a long issue): the guard adopts no state it cannot check"
	}
	live := e.in.Issue.LabelNames()
	var pending []string
	if t.ledger != nil {
		pending = t.ledger.Pending
	}
	for _, label := range e.cfg.Labels.Approval() {
		if slices.Contains(live, label) {
			continue
		}
		removedNow := e.in.Event.Name == "issues" && slices.Contains(e.in.Event.RemovedLabels, label)
		if !removedNow && !slices.Contains(pending, label) {
			continue
		}
		actor := e.actorOf(label, false)
		if e.isApprover(actor) {
			t.approved[label] = actor
			continue
		}
		t.restore = append(t.restore, removal{label, actor})
	}
	if l := t.ledger; l != nil && l.Baseline {
		e.judgeRelaxing(live, l)
	}
	eff := slices.Clone(live)
	for _, r := range t.relaxed {
		eff = slices.DeleteFunc(eff, func(x string) bool { return x == r.label })
	}
	if l := t.ledger; l != nil && len(t.relaxed) > 0 {
		// The accepted limits stay in effect: put their labels back when
		// the relaxing ones replaced them.
		n := e.cfg.Labels
		if l.DepthLimit != "" && len(cascadeLabels(eff, n)) == 0 {
			t.restore = append(t.restore, removal{n.CascadePrefix + l.DepthLimit, ""})
		}
		if _, ok := sizeFromLabels(eff, n.SizePrefix); l.Size != "" && !ok {
			t.restore = append(t.restore, removal{n.SizePrefix + l.Size, ""})
		}
	}
	for _, r := range t.restore {
		eff = append(eff, r.label)
	}
	e.labels = eff
}

// judgeRelaxing finds labels added since the ledger that relax a rule: a
// higher cascade limit, a larger task size. They count only when an
// approver added them.
func (e *eval) judgeRelaxing(live []string, l *Ledger) {
	accepted := depthRank(l.DepthLimit, e.cfg)
	for _, c := range cascadeLabels(live, e.cfg.Labels) {
		if depthRank(c.text, e.cfg) <= accepted {
			continue
		}
		if actor := e.actorOf(c.name, true); !e.isApprover(actor) {
			e.trust.relaxed = append(e.trust.relaxed, removal{c.name, actor})
		}
	}
	// Without a size label the size is inferred from the estimate: only a
	// label larger than both relaxes anything.
	acceptedSize := sizeRank(l.Size)
	if e.cp != nil {
		if s, ok := sizeFromEstimate(e.cp.NextEstimatedTokens.Value); ok {
			acceptedSize = max(acceptedSize, sizeRank(s.Name))
		}
	}
	for _, name := range live {
		rest, ok := strings.CutPrefix(name, e.cfg.Labels.SizePrefix)
		if !ok || sizeRank(rest) <= acceptedSize {
			continue
		}
		if actor := e.actorOf(name, true); !e.isApprover(actor) {
			e.trust.relaxed = append(e.trust.relaxed, removal{name, actor})
		}
	}
}

// depthRank orders cascade limits by how much they allow: none (and no
// default) allows nothing, n allows everything.
func depthRank(limit string, cfg Config) int {
	switch {
	case limit == "n" || limit == "N":
		return math.MaxInt
	case limit == "":
		if cfg.DefaultMaxDepth == nil {
			return -1
		}
		if *cfg.DefaultMaxDepth == Unlimited {
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

func sizeRank(name string) int {
	name = strings.ToLower(strings.TrimSpace(name))
	for i, s := range taskSizes {
		if s.Name == name {
			return i
		}
	}
	return -1
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
	for _, cs := range [][]Comment{e.in.Recent, e.in.Older} {
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
		return
	}
	ev := e.in.Event
	cv := e.in.Issue.ContentVersion
	since := fmt.Sprintf("since the guard accepted content version %d at %s", l.ContentVersion, time.Unix(l.Written, 0).UTC().Format(time.RFC3339))
	var why string
	switch {
	case ev.Name == "issues" && ev.Action == "edited" && cv == l.ContentVersion+1:
		if e.isApprover(ev.Sender) {
			return // the one edit since the ledger, made by an approver
		}
		why = fmt.Sprintf("edited by %s, who is %s", quoteShort(ev.Sender), e.approverRule())
	case cv > l.ContentVersion+1:
		why = fmt.Sprintf("over %d edits (content version %d → %d), so no one edit can be held to account; an approver checks the body and removes %s to accept it", cv-l.ContentVersion, l.ContentVersion, cv, pv)
	default:
		why = fmt.Sprintf("in an edit whose run the guard did not see (content version %d → %d)", l.ContentVersion, cv)
	}
	v := at(pos, "checkpoint", "the checkpoint was tampered with %s: %s, %s; a budget admin restores or approves it, then an approver removes %s",
		since, strings.Join(changes, "; "), why, pv)
	v.Label = pv
	t.tamper = append(t.tamper, v)
}

// legalTransition is a new phase started by the carryover rule of SPEC 5:
// consumed 0, total = remaining <= floor(ledger remaining × carryover-ratio)
// + phase-grant, version and issue unchanged.
func (e *eval) legalTransition(l *Ledger) bool {
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
		l := Ledger{Issue: e.in.Issue.Number}
		if t.ledger != nil {
			l = *t.ledger
		}
		l.Pending = pending
		l.Writer = e.in.Self
		l.Config = e.in.ConfigStamp
		e.recordChain(&l)
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
	if pr := e.plan.Prune; pr != nil {
		if pc := prunedCheckpoint(pr.Body, e.cfg); pc != nil {
			cp, cv = pc, cv+1
		}
	}
	l := &Ledger{
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
	}
	e.recordChain(l)
	for _, c := range cascadeLabels(after, n) {
		// With several (a conflict, failed by its own rule) the most
		// permissive is what was accepted.
		if l.DepthLimit == "" || depthRank(c.text, e.cfg) > depthRank(l.DepthLimit, e.cfg) {
			l.DepthLimit = c.text
		}
	}
	if s, ok := sizeFromLabels(after, n.SizePrefix); ok {
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

// labelsAfter are the issue's labels once this run's label writes are made.
func (e *eval) labelsAfter() []string {
	out := slices.DeleteFunc(e.in.Issue.LabelNames(), func(x string) bool {
		return slices.ContainsFunc(e.plan.RemoveLabels, func(l Label) bool { return l.Name == x })
	})
	for _, a := range e.plan.AddLabels {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}
