package guard

import "github.com/gns-guard/gns-guard/internal/issues"

// checkTaskTooLarge rejects issues.TooLargeEstimate or more unless a size
// label accepts it.
func checkTaskTooLarge(e *decision) []Violation {
	if e.cp == nil || e.in.Counter == nil {
		return nil
	}
	next := e.cp.NextEstimatedTokens
	if _, labelled := issues.SizeFromLabels(e.labels, e.cfg.Labels.SizePrefix); labelled {
		return nil
	}
	if _, ok := issues.SizeFromEstimate(next.Value); ok {
		return nil
	}
	return []Violation{at(next.Pos, "checkpoint.next_estimated_tokens", "the next task is estimated at %d tokens, at or over the %d "+
		"of the largest task size: split it, or label the issue %slarge to accept it",
		next.Value, issues.TooLargeEstimate, e.cfg.Labels.SizePrefix)}
}
