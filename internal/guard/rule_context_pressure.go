package guard

import "fmt"

// checkContextPressure gates the next agent's entry load — what `gns-guard
// context` loads: the checkpoint and the last 3 comments that are not the
// guard's own (entryload.Measure) — plus next_estimated_tokens, against the
// task size's max context. Over pressure-threshold it sets
// context::pressure-high.
func checkContextPressure(e *decision) []Violation {
	if e.cp == nil || e.in.Counter == nil {
		return nil
	}
	var out []Violation
	n := e.plan.Numbers
	if n.ContextRatio > e.cfg.PressureThreshold {
		v := at(e.blockPos(), "", "the next agent would load %d tokens (entry load %d, of which the last 3 comments that are not the "+
			"guard's %d, + next task %d), %s of the %d a %s task may use, over the pressure threshold of %s",
			n.ContextTokens, n.EntryTokens, n.CommentTokens, n.NextEstimated, percent(n.ContextRatio), n.MaxContext, n.TaskSize,
			percent(e.cfg.PressureThreshold))
		v.Label = e.cfg.Labels.PressureHigh
		out = append(out, v)
	}
	return out
}

func percent(r float64) string {
	return fmt.Sprintf("%.0f%%", r*100)
}
