package guard

import (
	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/finding"
)

// checkCheckpoint: missing, ambiguous, too large or invalid. Pruning repairs
// a long history_tail, so that only warns.
func checkCheckpoint(e *decision) []Violation {
	if len(e.parsed.Blocks) == 0 && e.in.Issue.BodyTooLarge {
		v := at(checkpoint.Pos{Line: 1, Col: 1}, "", "the body is too large to read (content-too-large), so its checkpoint block cannot be read")
		v.Rule = checkpoint.RuleMissing
		return []Violation{v}
	}
	if len(e.parsed.Blocks) == 0 {
		v := at(checkpoint.Pos{Line: 1, Col: 1}, "", "the issue carries GNS-2 labels but its body has no checkpoint block: add a "+
			"```yaml block whose root key is checkpoint (gns-guard schema shows its shape)")
		v.Rule = checkpoint.RuleMissing
		return []Violation{v}
	}
	var out []Violation
	for _, f := range e.parsed.Findings {
		if f.Rule == checkpoint.RuleTailTooLong {
			// The action repairs it by pruning, as the message says.
			f.Severity = finding.Warning
		}
		out = append(out, Violation{Finding: f})
	}
	return out
}
