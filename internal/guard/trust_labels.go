package guard

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// judgeLabels judges the label changes since the ledger (readRecord), by
// label id and from the timeline: a governance label renamed, an approval
// label removed, a relaxing label added, an accepted limit removed. It
// sets the effective labels every rule judges: renamed labels keep their
// accepted names, restored labels are on, unapproved relaxing labels off.
func (e *decision) judgeLabels() {
	live := e.acceptedNames()
	e.judgeApprovals(live)
	if _, ok := e.trust.approved[e.cfg.Labels.PermissionViolation]; ok {
		// An approver accepted the issue, new label names included.
		e.trust.renamed = nil
		live = slices.Clone(e.in.Issue.Labels)
	}
	if l := e.trust.ledger; l != nil && l.Baseline {
		e.judgeRelaxing(live, l)
		e.judgeRemoved(live, l)
	} else {
		e.judgeNewDepth(live)
	}
	e.labels = e.effectiveLabels(issues.NamesOf(live))
}

// accepted are the trusted record's governance labels and pending approvals.
func (t *trust) accepted() (labels []issues.Label, pending []string) {
	if l := t.ledger; l != nil {
		return l.Labels, l.Pending
	}
	return nil, nil
}

// acceptedNames are the issue's labels under the names the record accepted,
// where either name is a governance one: a rename shows no author, so it is
// undone and noted. An ordinary label renamed to an ordinary name keeps it.
func (e *decision) acceptedNames() []issues.Label {
	accepted, _ := e.trust.accepted()
	live := slices.Clone(e.in.Issue.Labels)
	for i, l := range live {
		for _, a := range accepted {
			if a.ID != 0 && a.ID == l.ID && a.Name != l.Name && (e.governs(a.Name) || e.governs(l.Name)) {
				e.trust.renamed = append(e.trust.renamed, rename{id: l.ID, from: a.Name, to: l.Name})
				live[i].Name = a.Name
			}
		}
	}
	return live
}

// judgeApprovals: a pending label removed by an approver approves; by
// others, it returns.
func (e *decision) judgeApprovals(live []issues.Label) {
	t := &e.trust
	accepted, pending := t.accepted()
	names := issues.NamesOf(live)
	for _, label := range e.cfg.Labels.Approval() {
		if slices.Contains(names, label) || !slices.Contains(pending, label) {
			continue
		}
		actor := e.actorOf(labelNamed(accepted, label), false)
		if !e.isApprover(actor) {
			t.restore = append(t.restore, removal{label: label, actor: actor})
			continue
		}
		if later := e.laterChange(t.ledger.Flag); later != "" {
			// The approval was for the flagged state: judge anew, restore.
			t.restore = append(t.restore, removal{label: label, actor: actor, later: later})
			continue
		}
		t.approved[label] = actor
	}
}

// effectiveLabels drop unapproved relaxing labels and restore removed ones.
func (e *decision) effectiveLabels(names []string) []string {
	t := &e.trust
	eff := slices.Clone(names)
	for _, r := range t.relaxed {
		eff = slices.DeleteFunc(eff, func(x string) bool { return x == r.label })
	}
	if l := t.ledger; l != nil && len(t.relaxed) > 0 {
		e.restoreLimits(eff, l)
	}
	for _, r := range t.restore {
		if !slices.Contains(eff, r.label) {
			eff = append(eff, r.label)
		}
	}
	return eff
}

// restoreLimits puts accepted limit labels back when relaxing ones replaced
// them.
func (e *decision) restoreLimits(eff []string, l *ledger.Record) {
	t := &e.trust
	n := e.cfg.Labels
	if l.DepthLimit != "" && len(cascadeLabels(eff, n)) == 0 && !restoring(t.restore, n.CascadePrefix+l.DepthLimit) {
		t.restore = append(t.restore, removal{label: n.CascadePrefix + l.DepthLimit})
	}
	if _, ok := issues.SizeFromLabels(eff, n.SizePrefix); l.Size != "" && !ok && !restoring(t.restore, n.SizePrefix+l.Size) {
		t.restore = append(t.restore, removal{label: n.SizePrefix + l.Size})
	}
}

// labelNamed is the accepted label (with id), else the name.
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
func (e *decision) judgeRelaxing(live []issues.Label, l *ledger.Record) {
	accepted := depthRank(l.DepthLimit, e.cfg)
	names := issues.NamesOf(live)
	for _, c := range cascadeLabels(names, e.cfg.Labels) {
		if depthRank(c.text, e.cfg) <= accepted {
			continue
		}
		if actor := e.actorOf(labelIn(live, c.name), true); !e.isApprover(actor) {
			e.trust.relaxed = append(e.trust.relaxed, removal{label: c.name, actor: actor})
		}
	}
	// An accepted size label holds until approved otherwise; an inflated
	// estimate relaxes nothing.
	acceptedSize := issues.SizeRank(l.Size)
	if l.Size == "" && e.cp != nil {
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
			e.trust.relaxed = append(e.trust.relaxed, removal{label: name, actor: actor})
		}
	}
}

// judgeRemoved finds an accepted cascade or size label removed where that
// relaxes the limit or leaves none of its kind. An approver's removal counts;
// anyone else's is undone, since an accepted limit holds until an approver
// changes it.
func (e *decision) judgeRemoved(live []issues.Label, l *ledger.Record) {
	for _, a := range l.Labels {
		if slices.ContainsFunc(live, func(x issues.Label) bool { return x.ID == a.ID && a.ID != 0 || x.Name == a.Name }) {
			continue
		}
		if !e.removalRelaxes(a.Name, issues.NamesOf(live)) {
			continue
		}
		if actor := e.actorOf(a, false); !e.isApprover(actor) {
			e.trust.removed = append(e.trust.removed, removal{label: a.Name, actor: actor})
			e.trust.restore = append(e.trust.restore, removal{label: a.Name, actor: actor})
		}
	}
}

// removalRelaxes reports whether taking the accepted label off, the issue
// keeping names, loosens its limit: a cascade or size label whose kind is
// then gone, or replaced by (or inferred as) a more permissive one.
func (e *decision) removalRelaxes(label string, names []string) bool {
	n := e.cfg.Labels
	if rest, ok := strings.CutPrefix(label, n.CascadePrefix); ok && label != n.DepthExceeded {
		cs := cascadeLabels(names, n)
		return len(cs) == 0 || depthRank(cs[0].text, e.cfg) > depthRank(rest, e.cfg)
	}
	if rest, ok := strings.CutPrefix(label, n.SizePrefix); ok {
		s, ok := issues.SizeFromLabels(names, n.SizePrefix)
		return !ok || issues.SizeRank(s.Name) > issues.SizeRank(rest)
	}
	return false
}

// labelIn is the live label (with id), else the name.
func labelIn(live []issues.Label, name string) issues.Label {
	for _, l := range live {
		if l.Name == name {
			return l
		}
	}
	return issues.Label{Name: name}
}

// depthRank: none allows nothing, n everything.
func depthRank(limit string, cfg config.Config) int {
	switch {
	case limit == "n" || limit == "N":
		return math.MaxInt
	case limit == "":
		if cfg.DefaultMaxDepth == nil {
			return -1
		}
		if *cfg.DefaultMaxDepth == config.Unlimited {
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
