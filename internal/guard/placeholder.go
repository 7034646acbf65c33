package guard

import (
	"fmt"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
)

// Fill sets checkpoint.issue: 0 to the number: compare-and-swap, never a
// violation (docs/contract.md §2).
type Fill struct {
	// Number is 0 when unknown (offline, no --issue): nothing is written.
	Number int64
	// Body is "" when Number is 0.
	Body string
}

// Write is the plan's write of the fill.
func (f *Fill) Write() Write {
	if f.Number == 0 {
		return Write{Kind: SetIssue, Detail: " to the issue's number on the guard's first run (0 is the template's placeholder)"}
	}
	return Write{Kind: SetIssue, Detail: fmt.Sprintf(" from the template's placeholder 0 to %d (compare-and-swap)", f.Number)}
}

// Note is the status comment's line for the fill.
func (f *Fill) Note() string {
	return fmt.Sprintf("The checkpoint held the issue template's placeholder `issue: 0`: the guard set it to this issue's number, %d.", f.Number)
}

// fillPlaceholder judges the body with the issue's number set when it holds the
// template's placeholder and no accepted state names a number yet. Once the
// ledger accepted a number, 0 is a changed number like any other.
func (e *decision) fillPlaceholder() {
	t := &e.trust
	if !e.parsed.HoldsPlaceholder() || t.problem != "" || (t.ledger != nil && t.ledger.Baseline) {
		return
	}
	n := e.in.Issue.Number
	if n == 0 {
		// A template placeholder is no error; the first run fills it.
		e.plan.Fill = &Fill{}
		return
	}
	body, ok := checkpoint.FillIssue(e.in.Issue.Body, e.parsed, n)
	if !ok {
		return
	}
	body = e.withHint(body)
	e.in.Issue.Body = body
	e.parsed = checkpoint.Parse(body, checkpoint.Options{
		Issue:     n,
		MaxBytes:  e.cfg.MaxCheckpointBytes,
		TailLimit: e.cfg.HistoryTail,
		Done:      e.in.Done,
	})
	if e.parsed.Valid() {
		// As with pruning, an otherwise invalid body is judged with the
		// number, not rewritten.
		e.plan.Fill = &Fill{Number: n, Body: body}
	}
}
