package guard

import (
	"strings"

	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/posture"
)

// RulePosture is a guarantee of the threat model that does not hold in
// the repository: a check of `gns-guard doctor` (package posture) the
// shell judged once for the default branch's commit and handed in as
// Input.Posture. It warns; it never fails a run (docs/choices.md).
const RulePosture = "posture"

// UncheckedPosture keys the warning on checks the tokens could not make.
const UncheckedPosture = "posture.unchecked"

// judgePosture warns of each failed check and who breaks it, and once of
// unmade ones.
func (e *decision) judgePosture() {
	if e.in.Posture == nil {
		return
	}
	e.plan.Warnings = append(e.plan.Warnings, PostureFindings(e.in.Posture.Broken)...)
}

// PostureFindings are the warnings of the checks that did not hold, in
// the judge's own words: one for each distinct why among the checks made
// (its key path the first check's id; the others named after it, as when
// there is no guard workflow at all), and one for all the checks that
// could not be made, grouped by why.
func PostureFindings(broken []posture.Check) []finding.Finding {
	made, unchecked := groupByWhy(broken)
	var out []finding.Finding
	for _, g := range made {
		msg := g.why
		if len(g.ids) > 1 {
			msg += " (" + strings.Join(g.ids, ", ") + ")"
		}
		out = append(out, finding.Finding{Rule: RulePosture, Severity: finding.Warning, KeyPath: g.ids[0], Message: msg})
	}
	if len(unchecked) > 0 {
		parts := make([]string, len(unchecked))
		for i, g := range unchecked {
			parts[i] = strings.Join(g.ids, ", ") + ": " + g.why
		}
		out = append(out, finding.Finding{Rule: RulePosture, Severity: finding.Warning, KeyPath: UncheckedPosture,
			Message: "the guard's tokens could not check " + strings.Join(parts, "; ")})
	}
	return out
}

// whyGroup is the failed checks sharing one why.
type whyGroup struct {
	why string
	ids []string
}

// groupByWhy keeps first-check order; unmade checks drop the
// posture.CouldNotCheck prefix.
func groupByWhy(broken []posture.Check) (made, unchecked []whyGroup) {
	add := func(gs []whyGroup, why, id string) []whyGroup {
		for i := range gs {
			if gs[i].why == why {
				gs[i].ids = append(gs[i].ids, id)
				return gs
			}
		}
		return append(gs, whyGroup{why: why, ids: []string{id}})
	}
	for _, c := range broken {
		if why, ok := c.Unchecked(); ok {
			unchecked = add(unchecked, why, c.ID)
		} else {
			made = add(made, c.Why, c.ID)
		}
	}
	return made, unchecked
}
