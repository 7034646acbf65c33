package status

import (
	"math"
	"time"

	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// Applied is what the next run will see changed.
type Applied struct {
	// Notes go in the status comment, e.g. a refused lock.
	Notes []string
	// Posted are the comments the run posted.
	Posted []issues.Comment
	// Pruned says the pruned body was written (in a dry run: would be);
	// Filled the same of the body with the placeholder issue number set,
	// Hinted of the body with its read hint.
	Pruned, Filled, Hinted bool
	// Locked: the issue is locked after the run.
	Locked bool
	// Record is the hidden ledger line the status comment carries, and
	// Written the server time it was written at (its updated_at after the
	// write, as far as the next run can tell).
	Record  string
	Written time.Time
	// Read is server time (zero: unknown), kept as ledger.Record.Read.
	Read time.Time
	// Moved says the status comment is posted anew at the end of the
	// issue (the old one deleted), so the next run finds it in reach.
	Moved bool
}

// Stable renders the status comment as the next run will judge the issue.
// The comment counts in the entry load it reports, and this run's labels
// change the state check, so a comment from the state as read would be
// rewritten every run. So the issue is decided again as left, until the
// comment says the same twice.
func Stable(in guard.Input, p *guard.Plan, existing *issues.Comment, a Applied) string {
	n := in.Issue.Number
	body := Render(n, p, in.Config, a.Notes, a.Record)
	if !p.Governed || in.OnPull() {
		return body
	}
	asRead := body
	// The record line repeats every round: verify it once.
	rec := in.Record
	if c := statusAfter(in.Self, body, existing, a.Moved, a.Written); !rec.Of(&c, ledger.ConfigKeys(in.Config)) {
		rec = ledger.Verify(&c, n, ledger.ConfigKeys(in.Config))
	}
	for range 3 {
		nextIn := after(in, p, existing, a, body)
		nextIn.Record = rec
		np := guard.Decide(nextIn)
		if np.Resolved != p.Resolved {
			// The guard's own comment tipped the verdict (it pushed a long
			// comment out of the last three, say): report this run's own
			// verdict, never "all clear" on a run that failed. The next run
			// judges the issue as it is now.
			return asRead
		}
		next := Render(n, np, in.Config, a.Notes, a.Record)
		if next == body {
			break
		}
		body = next
	}
	return body
}

// after is the next run's input once the writes and status are made.
func after(in guard.Input, p *guard.Plan, existing *issues.Comment, a Applied, status string) guard.Input {
	c := statusAfter(in.Self, status, existing, a.Moved, a.Written)
	ch := guard.Change{Remove: issues.NamesOf(p.RemoveLabels), Add: p.AddLabels, Locked: a.Locked, Posted: a.Posted, Status: &c,
		Existing: existing, Moved: a.Moved}
	if p.Ledger != nil {
		ch.IDs = p.Ledger.Labels // the ids the server answered the labels' addition with
	}
	switch {
	case p.Prune != nil && a.Pruned:
		ch.Body = &p.Prune.Body
	case p.Fill != nil && p.Fill.Number > 0 && a.Filled:
		ch.Body = &p.Fill.Body
	case p.Hint != nil && a.Hinted:
		ch.Body = &p.Hint.Body
	}
	return in.After(ch)
}

// statusAfter is the status comment as the run writes it: in place of
// existing (its id, link and creation time kept) unless moved, else a new
// comment after every other.
func statusAfter(self, body string, existing *issues.Comment, moved bool, written time.Time) issues.Comment {
	c := issues.Comment{ID: math.MaxInt64, Author: self, Body: body, UpdatedAt: written}
	if existing != nil && !moved {
		c.ID, c.HTMLURL, c.CreatedAt = existing.ID, existing.HTMLURL, existing.CreatedAt
	}
	return c
}
