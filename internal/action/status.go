package action

import (
	"slices"

	"github.com/gns-guard/gns-guard/internal/guard"
)

// settledStatus renders the status comment as the next run will judge the
// issue. The status comment is one of the issue's last comments, so it
// counts in the entry load it reports, and the labels this run sets show in
// the state.labels check: rendered from the state as read, the next run on
// an unchanged issue would find different figures and rewrite it, every
// time. So the body is decided again on the issue as this run leaves it
// (its labels, body and comments, this comment included), until it says
// the same twice.
func (r *runner) settledStatus(s snapshot, p *guard.Plan, existing *guard.Comment, res applied) string {
	n := s.issue.Number
	body := guard.RenderStatus(n, p, r.set.Config, res.notes)
	if !p.Governed || r.event.Name == "pull_request" {
		return body
	}
	asRead := body
	for range 3 {
		in := r.nextInput(s, p, existing, res, body)
		np := guard.Decide(in)
		if np.Resolved != p.Resolved {
			// The guard's own comment tipped the verdict (it pushed a long
			// comment out of the last three, say): report this run's own
			// verdict, never "all clear" on a run that failed. The next
			// run judges the issue as it is now.
			return asRead
		}
		next := guard.RenderStatus(n, np, r.set.Config, res.notes)
		if next == body {
			break
		}
		body = next
	}
	return body
}

// nextInput is the decision input of the next run, once this run's writes
// are made and its status comment says body.
func (r *runner) nextInput(s snapshot, p *guard.Plan, existing *guard.Comment, res applied, body string) guard.Input {
	issue := s.issue
	if p.Prune != nil && (res.pruned || r.set.Config.DryRun) {
		issue.Body = p.Prune.Body
	}
	issue.Labels = slices.DeleteFunc(slices.Clone(issue.Labels), func(l guard.Label) bool {
		return slices.ContainsFunc(p.RemoveLabels, func(x guard.Label) bool { return x.Name == l.Name })
	})
	for _, name := range p.AddLabels {
		issue.Labels = append(issue.Labels, guard.Label{Name: name})
	}
	if p.Lock != "" && !slices.Contains(res.notes, lockRefused) {
		issue.Locked = true
	}
	recent := slices.Clone(s.recent.Comments)
	recent = append(recent, res.posted...)
	status := guard.Comment{Author: r.self, Body: body}
	if existing != nil {
		status = *existing
		status.Body = body
		recent = slices.DeleteFunc(recent, func(c guard.Comment) bool { return c.ID == existing.ID })
		i := slices.IndexFunc(recent, func(c guard.Comment) bool { return c.ID > existing.ID })
		if i < 0 {
			i = len(recent)
		}
		recent = slices.Insert(recent, i, status)
	} else {
		recent = append(recent, status)
	}
	issue.Comments = len(recent) + max(0, s.issue.Comments-len(s.recent.Comments))
	return guard.Input{
		Config:    r.set.Config,
		Issue:     issue,
		Event:     r.event,
		Recent:    recent,
		Self:      r.self,
		PullFiles: s.files,
		Now:       r.o.Now().UTC(),
		Counter:   r.counter,
	}
}
