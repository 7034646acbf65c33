package guard

import (
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// checkStateDrift only warns: body writes refresh state.labels.
func checkStateDrift(e *decision) []Violation {
	if e.cp == nil || !e.cp.State.Labels.Set {
		return nil
	}
	var recorded []string
	for _, s := range e.cp.State.Labels.Items {
		recorded = append(recorded, s.Value)
	}
	missing := subtract(e.labels, recorded) // live, not recorded
	extra := subtract(recorded, e.labels)   // recorded, not live
	if len(missing) == 0 && len(extra) == 0 {
		return nil
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "live but not recorded: "+quoteList(missing))
	}
	if len(extra) > 0 {
		parts = append(parts, "recorded but not live: "+quoteList(extra))
	}
	v := at(e.cp.State.Labels.Pos, "checkpoint.state.labels", "state.labels differs from the issue's labels (%s); it is refreshed on "+
		"the guard's next write to the body", strings.Join(parts, "; "))
	v.Severity = finding.Warning
	return []Violation{v}
}

func subtract(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = markdown.Quote(x)
	}
	return strings.Join(q, ", ")
}
