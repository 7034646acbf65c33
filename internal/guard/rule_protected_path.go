package guard

import (
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// checkProtectedPaths requires permission::evolve-system to change a
// protected path.
func checkProtectedPaths(e *decision) []Violation {
	evolve := e.cfg.Labels.EvolveSystem
	out := e.pullRecordFindings()
	if len(e.cfg.ProtectedPaths) == 0 {
		return out
	}
	// The label opens the protected paths only when the pull request's
	// record accepted it or an approver added it (by label id): an agent
	// labelling its own pull request, or renaming another label to it,
	// opens nothing.
	adder := e.trust.evolveBy
	if e.hasLabel(evolve) && e.trust.evolveOK {
		return out
	}
	var hits []string
	for _, f := range e.in.PullFiles {
		for _, p := range e.cfg.ProtectedPaths {
			if underPath(f, p) {
				hits = append(hits, f)
				break
			}
		}
	}
	if len(hits) == 0 {
		return out
	}
	shown := hits
	if len(shown) > 10 {
		shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(hits)-10))
	}
	for i := range shown {
		shown[i] = markdown.Quote(shown[i])
	}
	without := fmt.Sprintf("without the %s label", evolve)
	if e.hasLabel(evolve) {
		without = fmt.Sprintf("with the %s label added by %s, who is %s (only an approver's label counts)", evolve, who(adder), e.approverRule())
	}
	v := at(checkpoint.Pos{Line: 1, Col: 1}, "", "the pull request changes %d protected path(s) under %s %s: %s",
		len(hits), strings.Join(e.cfg.ProtectedPaths, ", "), without, strings.Join(shown, ", "))
	v.Label = e.cfg.Labels.PermissionViolation
	return append(out, v)
}

// pullRecordFindings are the checkpoint-tampered findings of a pull
// request's record: it cannot be trusted (edited, deleted while its
// anchor stands), or a label was renamed into or out of a governance name
// since it recorded it.
func (e *decision) pullRecordFindings() []Violation {
	var out []Violation
	if e.trust.problem != "" {
		out = append(out, e.untrustedFinding())
	}
	out = append(out, e.renameFindings()...)
	for i := range out {
		out[i].Rule = RuleTampered
	}
	return out
}

// underPath reports whether file is protected or below it.
func underPath(file, protected string) bool {
	file = strings.TrimPrefix(file, "./")
	protected = strings.TrimPrefix(protected, "./")
	dir := strings.TrimSuffix(protected, "/")
	return file == dir || strings.HasPrefix(file, dir+"/")
}
