package handoff

import (
	"slices"
	"time"

	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/status"
)

// Judgement judges the issue as the report leaves it, and as it is.
type Judgement struct {
	// Plan is the decision of the first of the guard's runs after the
	// report that fails, or of the run on the state the report leaves
	// when none does.
	Plan *guard.Plan
	// Run is which run Plan is: 1 for the run on the state the report
	// leaves, 2 for the run after that run's own writes (its prune, its
	// digest, its status comment moved to the end), and so on.
	Run int
	// Already are rules failing the issue before the report.
	Already []string
}

// Refused reports whether a run the report causes would fail.
func (j Judgement) Refused() bool { return len(j.Plan.Violations) > 0 }

// Judged is the decision before the report, then Predict's runs, in order.
func Judged(before *guard.Plan, runs ...*guard.Plan) Judgement {
	j := Judgement{Plan: runs[0], Run: 1}
	for i, p := range runs {
		if len(p.Violations) > 0 {
			j.Plan, j.Run = p, i+1
			break
		}
	}
	for _, v := range before.Violations {
		if !slices.Contains(j.Already, v.Rule) {
			j.Already = append(j.Already, v.Rule)
		}
	}
	return j
}

// Judge is the guard's judgement of a report (o, its comment text, own:
// the id of the comment an earlier run of the invocation posted, 0 when
// none) on the issue as read (in, a run's input): the run before it, and
// the runs it causes (Predict). decide is the shell's decision.
func Judge(in guard.Input, o *Outcome, comment string, own int64, sender string, now time.Time, decide func(guard.Input) (
	*guard.Plan, error)) (Judgement, error) {
	before, after := Inputs(in, o, comment, own, sender, now)
	planBefore, err := decide(before)
	if err != nil {
		return Judgement{}, err
	}
	runs, err := Predict(after, now, decide)
	if err != nil {
		return Judgement{}, err
	}
	return Judged(planBefore, runs...), nil
}

// PredictedRuns is how many of the guard's runs Predict follows: the run
// on the state the report leaves, the run after that run's own writes,
// and one more, by which the status comment has settled.
const PredictedRuns = 3

// Predict decides the guard's runs a report causes: the run on after, then
// each next run on what the one before leaves (status.NextInput), until one
// fails or PredictedRuns are decided. A report causes several events, so
// the guard must never fail a state `report` accepted. decide answers
// questions as the guard's run would.
func Predict(after guard.Input, now time.Time, decide func(guard.Input) (*guard.Plan, error)) ([]*guard.Plan, error) {
	var runs []*guard.Plan
	in := after
	ev := issues.Event{Name: "issues", Action: "edited", Number: after.Issue.Number, Sender: after.Event.Sender}
	for i := range PredictedRuns {
		p, err := decide(in)
		if err != nil {
			return nil, err
		}
		runs = append(runs, p)
		if len(p.Violations) > 0 || i == PredictedRuns-1 {
			break
		}
		in = status.NextInput(in, p, ev, now)
	}
	return runs, nil
}

// Inputs are the guard's decision inputs before and after the report, from
// in: the new body (content version one higher), the labels after, the
// result comment unless posted (own: its id, or 0), and the edit's event
// with the report's label changes, judged as the guard judges them.
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
