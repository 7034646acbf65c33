package action

import (
	"context"
	"slices"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/guard"
)

// settledStatus renders the status comment as the next run will judge the
// issue (guard.Settle), given what applying the plan did.
func (r *runner) settledStatus(s snapshot, p *guard.Plan, existing *guard.Comment, res applied) string {
	in, cancel := r.input(s)
	defer cancel()
	return guard.Settle(in, p, existing, guard.Applied{
		Notes:  res.notes,
		Posted: res.posted,
		Pruned: p.Prune != nil && (res.pruned || r.set.Config.DryRun),
		Locked: p.Lock != "" && !slices.Contains(res.notes, lockRefused),
	})
}

// input is the decision input of a snapshot, with a fresh deadline for the
// YAML parses of one decision; cancel releases it.
func (r *runner) input(s snapshot) (in guard.Input, cancel context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), checkpoint.ParseTimeout)
	return guard.Input{
		Config:    r.set.Config,
		Issue:     s.issue,
		Event:     r.event,
		Recent:    s.recent.Comments,
		Self:      r.self,
		PullFiles: s.files,
		Now:       r.o.Now().UTC(),
		Counter:   r.counter,
		Done:      ctx.Done(),
	}, cancel
}
