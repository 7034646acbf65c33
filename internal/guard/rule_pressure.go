package guard

import "fmt"

// checkContextPressure gates the next agent's entry load: checkpoint tokens
// plus the last 3 comments plus next_estimated_tokens, against the task
// size's max context. Over pressure-threshold it sets context::pressure-high.
// It also rejects an estimate of 20k or more when no size label says so.
func checkContextPressure(e *eval) []Violation {
	if e.cp == nil || e.in.Counter == nil {
		return nil
	}
	var out []Violation
	next := e.cp.NextEstimatedTokens
	if _, labelled := sizeFromLabels(e.labels, e.cfg.Labels.SizePrefix); !labelled {
		if _, ok := sizeFromEstimate(next.Value); !ok {
			v := at(next.Pos, "checkpoint.next_estimated_tokens", "the next task is estimated at %d tokens, at or over the 20000 of the largest task size: split it, or label the issue %slarge to accept it",
				next.Value, e.cfg.Labels.SizePrefix)
			v.Rule = RuleTaskTooLarge
			out = append(out, v)
		}
	}
	n := e.plan.Numbers
	if n.ContextRatio > e.cfg.PressureThreshold {
		v := at(e.blockPos(), "", "the next agent would load %d tokens (checkpoint %d + last 3 comments %d + next task %d), %s of the %d a %s task may use, over the pressure threshold of %s",
			n.ContextTokens, n.CheckpointTokens, n.CommentTokens, n.NextEstimated, percent(n.ContextRatio), n.MaxContext, n.TaskSize, percent(e.cfg.PressureThreshold))
		v.Rule = RuleContextPressure
		v.Label = e.cfg.Labels.PressureHigh
		out = append(out, v)
	}
	return out
}

func percent(r float64) string {
	return fmt.Sprintf("%.0f%%", r*100)
}
