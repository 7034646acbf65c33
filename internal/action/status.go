package action

import (
	"context"
	"slices"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/guard"
)

// settledStatus renders the status comment, carrying record (written at
// written), as the next run will judge the issue (guard.Settle), given
// what applying the plan did.
func (r *runner) settledStatus(s snapshot, p *guard.Plan, existing *guard.Comment, res applied, record string, written time.Time) string {
	return r.renderStatus(s, p, existing, res, record, written, false)
}

// settledStatusMoved is settledStatus for a status comment posted anew at
// the end of the issue.
func (r *runner) settledStatusMoved(s snapshot, p *guard.Plan, existing *guard.Comment, res applied, record string, written time.Time) string {
	return r.renderStatus(s, p, existing, res, record, written, true)
}

func (r *runner) renderStatus(s snapshot, p *guard.Plan, existing *guard.Comment, res applied, record string, written time.Time, moved bool) string {
	in, cancel := r.input(s)
	defer cancel()
	return guard.Settle(in, p, existing, guard.Applied{
		Notes:   res.notes,
		Posted:  res.posted,
		Pruned:  p.Prune != nil && (res.pruned || r.set.Config.DryRun),
		Locked:  p.Lock != "" && !slices.Contains(res.notes, lockRefused),
		Record:  record,
		Written: written,
		Moved:   moved,
	})
}

// input is the decision input of a snapshot, with a fresh deadline for the
// YAML parses of one decision; cancel releases it.
func (r *runner) input(s snapshot) (in guard.Input, cancel context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), checkpoint.ParseTimeout)
	return guard.Input{
		Config:      r.set.Config,
		Issue:       s.issue,
		Event:       r.event,
		Recent:      s.recent.Comments,
		Self:        r.self,
		Repo:        r.owner + "/" + r.repo,
		PullFiles:   s.files,
		Now:         r.o.Now().UTC(),
		Counter:     r.counter,
		Done:        ctx.Done(),
		Status:      s.status,
		Older:       s.older,
		LabelEvents: s.labels,
		Admins:      s.admins,
		Unreached:   s.unreached,
	}, cancel
}
