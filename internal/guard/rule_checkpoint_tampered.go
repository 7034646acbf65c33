package guard

import (
	"slices"

	"github.com/gns-guard/gns-guard/internal/markdown"
)

// checkTamper reports what judging the issue against the ledger found
// (trust.go): a checkpoint changed since the trusted state by someone not
// allowed to, a ledger record that cannot be trusted, an approval label
// removed or a relaxing label added by someone not allowed to. Each sets
// permission::violation.
func checkTamper(e *decision) []Violation {
	out := append(e.pinFindings(), e.trust.tamper...)
	pv := e.cfg.Labels.PermissionViolation
	for _, r := range e.trust.restore {
		if !slices.Contains(e.cfg.Labels.Approval(), r.label) {
			continue // an accepted limit put back: the relaxing label's finding says why
		}
		if r.later != "" {
			v := at(e.blockPos(), "", "the %s label was removed by %s, an approver, but %s: an approval accepts only the state the guard "+
				"flagged, so the guard put the label back and judged the issue as it is now; the approver removes it again to accept this state",
				r.label, who(r.actor), r.later)
			v.Label = r.label
			out = append(out, v)
			continue
		}
		v := at(e.blockPos(), "", "the %s label was removed by %s, who is %s: only an approver's removal approves; the guard put it back",
			r.label, who(r.actor), e.approverRule())
		v.Label = pv
		out = append(out, v)
	}
	for _, r := range e.trust.removed {
		v := at(e.blockPos(), "", "the accepted %s label was removed by %s, who is %s: removing it relaxes the limit; only an "+
			"approver's removal counts, and the guard put it back",
			r.label, who(r.actor), e.approverRule())
		v.Label = pv
		out = append(out, v)
	}
	out = append(out, e.renameFindings()...)
	for _, r := range e.trust.relaxed {
		v := at(e.blockPos(), "", "the %s label relaxes a rule and was added by %s, who is %s: it takes no effect and the guard removed "+
			"it; an approver adds it to raise the limit",
			r.label, who(r.actor), e.approverRule())
		v.Label = pv
		out = append(out, v)
	}
	return out
}

// renameFindings report governance labels renamed since recorded.
func (e *decision) renameFindings() []Violation {
	var out []Violation
	pv := e.cfg.Labels.PermissionViolation
	for _, r := range e.trust.renamed {
		v := at(e.blockPos(), "", "the label %s (id %d) was renamed to %s since the guard recorded it: renaming a label into or out of "+
			"a governance name is a change only an approver makes, and the issue does not show who renamed it; the guard judges it as %s "+
			"until it is renamed back or an approver removes %s to accept the new name",
			markdown.Quote(r.from), r.id, markdown.Quote(r.to), markdown.Quote(r.from), pv)
		v.Label = pv
		out = append(out, v)
	}
	return out
}
