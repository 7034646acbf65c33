package guard

import (
	"slices"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// Governance labels are pinned by id (docs/ledger.md#pinned-labels). A
// governance name under an unpinned id is a forgery: it counts for nothing,
// goes, and fails the run. A pinned label renamed is tampering. The timeline
// keeps no label's old name, so only pins catch a rename made before a run.

// pinning is what the pins found on the issue's labels.
type pinning struct {
	forged  []issues.Label // governance names under ids not pinned to them
	renamed []rename       // pinned labels renamed
	problem string         // why the pins cannot be trusted
}

// Governs names what pins hold: cascade::, size::, approval, evolve-system
// and the guard's labels.
func Governs(name string, cfg config.Config) bool {
	n := cfg.Labels
	return (&decision{cfg: cfg}).governs(name) || name == n.DepthExceeded || name == n.PressureHigh
}

// judgePins drops forgeries and restores pinned names of renamed labels.
func (e *decision) judgePins() {
	st := e.in.Pins
	if !st.Known || st.Text == "" {
		return
	}
	pins, problem := ledger.ReadPins(st.Text, e.in.Issue.RepoID, ledger.ConfigKeys(e.cfg))
	if problem != "" {
		e.pins.problem = problem
		return
	}
	var kept []issues.Label
	for _, l := range e.in.Issue.Labels {
		if pinned := pins.NameOf(l.ID); pinned != "" && pinned != l.Name {
			e.pins.renamed = append(e.pins.renamed, rename{id: l.ID, from: pinned, to: l.Name})
			l.Name = pinned
		} else if Governs(l.Name, e.cfg) && pins.Labels[l.Name] != l.ID {
			e.pins.forged = append(e.pins.forged, l)
			continue
		}
		kept = append(kept, l)
	}
	e.in.Issue.Labels = kept
	e.labels = e.in.Issue.LabelNames()
}

// pinFindings: forgeries, renamed pinned labels, or untrusted pins.
func (e *decision) pinFindings() []Violation {
	pv := e.cfg.Labels.PermissionViolation
	var out []Violation
	if p := e.pins.problem; p != "" {
		v := at(e.blockPos(), "", "%s; governance labels cannot be told from forgeries until the owner deletes the variable (the guard "+
			"pins the labels anew) or an approver removes %s", p, pv)
		v.Label, v.Rule = pv, RuleTampered
		out = append(out, v)
	}
	for _, l := range e.pins.forged {
		v := at(e.blockPos(), "", "the label %s (id %d) carries a governance name, but it is not the label the guard pinned under that "+
			"name (%s): a forgery — it counts for nothing, and the guard took it off",
			markdown.Quote(l.Name), l.ID, ledger.PinsName)
		v.Label, v.Rule = pv, RuleTampered
		out = append(out, v)
	}
	for _, r := range e.pins.renamed {
		v := at(e.blockPos(), "", "the pinned governance label %s (id %d) was renamed to %s: renaming a pinned label is tampering; the "+
			"guard judges it as %s until it is renamed back",
			markdown.Quote(r.from), r.id, markdown.Quote(r.to), markdown.Quote(r.from))
		v.Label, v.Rule = pv, RuleTampered
		out = append(out, v)
	}
	return out
}

// PinsFor are pins that hold the governance labels among labels (the
// repository's, or those a run created) that old lacks, the lowest id for
// a name given twice; changed says any was added. old nil starts anew.
func PinsFor(old *ledger.Pins, repo int64, labels []issues.Label, cfg config.Config) (ledger.Pins, bool) {
	p := ledger.Pins{Repo: repo, Labels: map[string]int64{}}
	if old != nil {
		for k, v := range old.Labels {
			p.Labels[k] = v
		}
	}
	sorted := slices.Clone(labels)
	slices.SortFunc(sorted, func(a, b issues.Label) int { return int(a.ID - b.ID) })
	changed := false
	for _, l := range sorted {
		if _, ok := p.Labels[l.Name]; ok || l.ID == 0 || !Governs(l.Name, cfg) || p.NameOf(l.ID) != "" {
			continue
		}
		p.Labels[l.Name] = l.ID
		changed = true
	}
	return p, changed
}
