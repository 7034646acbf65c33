package exitprotocol

import (
	"slices"
	"time"

	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
)

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

// Judged pairs the decisions on the issue before and after the report.
func Judged(before, after *guard.Plan) Judgement {
	j := Judgement{Plan: after}
	for _, v := range before.Violations {
		if !slices.Contains(j.Already, v.Rule) {
			j.Already = append(j.Already, v.Rule)
		}
	}
	return j
}

// Inputs are the guard's decision inputs on the issue as it is (before)
// and as the report would leave it (after), from the input of a run on the
// issue as read (in): the new body (its content version one higher, as the
// edit makes it), the labels after, the result comment among the last
// comments unless it was posted already (own: its id, 0 when not posted),
// and the event the body's edit causes (the label changes the report makes
// included, so an unapproved relaxing label or a removed approval label is
// judged as the guard judges it). The shell decides both, answering the
// decision's questions as the guard's run would.
func Inputs(in guard.Input, o *Outcome, comment string, own int64, sender string, now time.Time) (before, after guard.Input) {
	in.Config.DryRun = true
	n := in.Issue.Number
	before = in
	before.Event = issues.Event{Name: "issues", Action: "edited", Number: n, Sender: sender}
	ev := issues.Event{Name: "issues", Action: "edited", Number: n, Sender: sender, AddedLabels: o.Add, RemovedLabels: o.Remove}
	ch := guard.Change{Body: &o.Body, Add: o.Add, Remove: o.Remove, Event: &ev}
	if own == 0 {
		var id int64
		for _, c := range append(slices.Clone(in.Older), in.Recent...) {
			id = max(id, c.ID)
		}
		ch.Posted = []issues.Comment{{ID: id + 1, Author: sender, Body: comment, CreatedAt: now, UpdatedAt: now}}
	}
	return before, before.After(ch)
}
