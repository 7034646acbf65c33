package action

import (
	"slices"

	"github.com/gns-guard/gns-guard/internal/guard"
)

// settledStatus renders the status comment as the next run will judge the
// issue (guard.Settle), given what applying the plan did.
func (r *runner) settledStatus(s snapshot, p *guard.Plan, existing *guard.Comment, res applied) string {
	return guard.Settle(r.input(s), p, existing, guard.Applied{
		Notes:  res.notes,
		Posted: res.posted,
		Pruned: p.Prune != nil && (res.pruned || r.set.Config.DryRun),
		Locked: p.Lock != "" && !slices.Contains(res.notes, lockRefused),
	})
}

// input is the decision input of a snapshot.
func (r *runner) input(s snapshot) guard.Input {
	return guard.Input{
		Config:    r.set.Config,
		Issue:     s.issue,
		Event:     r.event,
		Recent:    s.recent.Comments,
		Self:      r.self,
		PullFiles: s.files,
		Now:       r.o.Now().UTC(),
		Counter:   r.counter,
	}
}
