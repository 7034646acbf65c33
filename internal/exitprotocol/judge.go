package exitprotocol

import (
	"slices"
	"time"

	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// Issue is the issue as the report read it: what the guard reads on a run.
type Issue struct {
	Issue guard.Issue
	// Recent are the last comments, oldest first; Older those read further
	// back while looking for the status comment; LabelEvents the label
	// changes among them.
	Recent, Older []guard.Comment
	LabelEvents   []guard.LabelEvent
	// Status is the guard's status comment (its ledger), or nil.
	Status *guard.Comment
	// Guard is the guard's login; Sender the login the report writes as.
	Guard, Sender string
}

// Judgement is the guard's decision on the issue as the report would leave
// it, and on the issue as it is.
type Judgement struct {
	// Plan is the decision on the issue after the report.
	Plan *guard.Plan
	// Already are the rules that fail the issue as it is, before the report.
	Already []string
}

// Refused reports whether the guard would fail the run the report causes.
func (j Judgement) Refused() bool { return len(j.Plan.Violations) > 0 }

// Judge runs the guard's decision with cfg on the issue as the report
// would leave it: the new body (its content version one higher, as the
// edit makes it), the labels after, the result comment among the last
// comments (own is the id it has, 0 when not posted yet), and the event
// the body's edit causes (the label changes the report makes included, so
// an unapproved relaxing label or a removed approval label is judged as
// the guard judges it). Questions the decision asks of the server (whether
// a user is a repository admin) are answered from admins, and no for
// anyone else: the report writes as an agent.
func Judge(cfg guard.Config, in Issue, o *Outcome, comment string, own int64, admins map[string]bool, now time.Time, counter *tokens.Counter, done <-chan struct{}) Judgement {
	cfg.DryRun = true
	after := in.Issue
	after.Body = o.Body
	after.ContentVersion++
	after.Labels = nil
	for _, name := range o.Labels {
		l := guard.Label{Name: name}
		for _, x := range in.Issue.Labels {
			if x.Name == name {
				l = x
			}
		}
		after.Labels = append(after.Labels, l)
	}
	recent := slices.Clone(in.Recent)
	if own == 0 {
		var id int64
		for _, c := range append(slices.Clone(in.Older), in.Recent...) {
			id = max(id, c.ID)
		}
		recent = append(recent, guard.Comment{ID: id + 1, Author: in.Sender, Body: comment, CreatedAt: now, UpdatedAt: now})
	}
	ask := func(issue guard.Issue, recent []guard.Comment, ev guard.Event) *guard.Plan {
		known := map[string]bool{}
		for k, v := range admins {
			known[k] = v
		}
		for range 4 {
			p := guard.Decide(guard.Input{
				Config: cfg, Issue: issue, Event: ev, Recent: recent, Self: in.Guard, Status: in.Status,
				Older: in.Older, LabelEvents: in.LabelEvents, Admins: known, Now: now, Counter: counter, Done: done,
			})
			if p.AskAdmin == "" {
				return p
			}
			known[p.AskAdmin] = false
		}
		return guard.Decide(guard.Input{Config: cfg, Issue: issue, Event: ev, Recent: recent, Self: in.Guard, Status: in.Status,
			Older: in.Older, LabelEvents: in.LabelEvents, Admins: known, Now: now, Counter: counter, Done: done})
	}
	ev := guard.Event{Name: "issues", Action: "edited", Number: in.Issue.Number, Sender: in.Sender,
		AddedLabels: o.Add, RemovedLabels: o.Remove}
	j := Judgement{Plan: ask(after, recent, ev)}
	before := ask(in.Issue, in.Recent, guard.Event{Name: "issues", Action: "edited", Number: in.Issue.Number, Sender: in.Sender})
	for _, v := range before.Violations {
		if !slices.Contains(j.Already, v.Rule) {
			j.Already = append(j.Already, v.Rule)
		}
	}
	return j
}
