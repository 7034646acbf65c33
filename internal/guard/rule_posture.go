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

// UncheckedPosture is the key path of the one warning that names the
// checks the guard's tokens could not make.
const UncheckedPosture = "posture.unchecked"

// judgePosture warns of every check of the posture that did not hold,
// naming who breaks it, and says once which checks the guard's tokens
// could not make.
func (e *eval) judgePosture() {
	if e.in.Posture == nil {
		return
	}
	e.plan.Warnings = append(e.plan.Warnings, PostureFindings(e.in.Posture.Broken)...)
}

// PostureFindings are the warnings of the checks that did not hold: one
// for each check made, its key path the check's id and its message the
// judge's own words, and one for all the checks that could not be made,
// grouped by why.
func PostureFindings(broken []posture.Check) []finding.Finding {
	var out []finding.Finding
	var reasons []string
	ids := map[string][]string{}
	for _, c := range broken {
		if why, unchecked := c.Unchecked(); unchecked {
			if _, seen := ids[why]; !seen {
				reasons = append(reasons, why)
			}
			ids[why] = append(ids[why], c.ID)
			continue
		}
		out = append(out, finding.Finding{Rule: RulePosture, Severity: finding.Warning, KeyPath: c.ID, Message: c.Why})
	}
	if len(reasons) > 0 {
		parts := make([]string, len(reasons))
		for i, why := range reasons {
			parts[i] = strings.Join(ids[why], ", ") + ": " + why
		}
		out = append(out, finding.Finding{Rule: RulePosture, Severity: finding.Warning, KeyPath: UncheckedPosture,
			Message: "the guard's tokens could not check " + strings.Join(parts, "; ")})
	}
	return out
}
