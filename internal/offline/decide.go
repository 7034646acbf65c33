package offline

import (
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// Input is everything an offline decision reads: no flags, files or
// clock.
type Input struct {
	Source  string   // the name findings are reported under
	Body    string   // the issue body (or a bare checkpoint)
	Issue   int64    // the issue's number; 0: the checkpoint's own
	Labels  []string // the live labels (empty: none); nil: the checkpoint's state.labels
	Config  config.Config
	Counter *tokens.Counter
	Now     time.Time
	Done    <-chan struct{} // the parse deadline
}

// Decision is the guard's decision on a body made offline, as check and
// prune make it.
type Decision struct {
	Parsed checkpoint.Result
	Plan   *guard.Plan
	Labels []string // the labels judged: the given ones, else state.labels
	Number int64    // the issue's number: the given one, else the checkpoint's
}

// Decide runs the guard's decision on a body offline: the labels are the
// given live ones, else the checkpoint's own record of them, and there are
// no comments and no ledger.
func Decide(o Input) Decision {
	cfg, body := o.Config, o.Body
	d := Decision{Number: o.Issue}
	d.Parsed = checkpoint.Parse(body, checkpoint.Options{Issue: o.Issue, MaxBytes: cfg.MaxCheckpointBytes, TailLimit: cfg.HistoryTail, Done: o.Done})
	labelsKnown := o.Labels != nil
	if cp := d.Parsed.Checkpoint; cp != nil {
		if d.Number == 0 && cp.Issue.Set {
			d.Number = cp.Issue.Value
		}
		for _, l := range cp.State.Labels.Items {
			d.Labels = append(d.Labels, l.Value)
		}
		labelsKnown = labelsKnown || cp.State.Labels.Set
	}
	if o.Labels != nil {
		d.Labels = o.Labels
	}
	in := guard.Input{
		Config:  cfg,
		Issue:   issues.Issue{Number: d.Number, Body: body},
		Event:   issues.Event{Name: "issues", Action: "opened", Number: d.Number},
		Now:     o.Now,
		Counter: o.Counter,
		Done:    o.Done,
		// Offline, the labels are the checkpoint's own record of them.
		LabelsUnknown: !labelsKnown,
	}
	for i, l := range d.Labels {
		in.Issue.Labels = append(in.Issue.Labels, issues.Label{ID: int64(i + 1), Name: l})
	}
	d.Plan = guard.Decide(in)
	return d
}
