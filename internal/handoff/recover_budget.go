package handoff

import (
	"fmt"
	"strings"
	"time"
)

// baselineSkew is how much later than the baseline's time a footer may be
// posted and still be the result the baseline accounts for: the guard
// records its state after the comment that moved it.
const baselineSkew = time.Minute

// eventsSince returns the events the baseline does not account for, oldest
// first, and how they were told apart, for the explanations. They follow
// the last event, posted at most baselineSkew after the baseline, whose
// footer's budget.remaining is the baseline's in its phase; when none
// matches, they are the events posted after the baseline's time.
func eventsSince(b Baseline, events []Event) (since []Event, how string) {
	start := -1
	for i, e := range events {
		if *e.Footer.Budget.Remaining == b.Remaining && e.Footer.Phase == b.Phase && !e.Created.After(b.Written.Add(baselineSkew)) {
			start = i
		}
	}
	if start >= 0 {
		return events[start+1:], fmt.Sprintf("after comment %d, whose footer's budget.remaining %d is the baseline's", events[start].CommentID, b.Remaining)
	}
	for _, e := range events {
		if e.Created.After(b.Written) {
			since = append(since, e)
		}
	}
	return since, "posted after " + b.Written.UTC().Format(time.RFC3339)
}

// budgetChain is the baseline's consumption with the footers since added.
type budgetChain struct {
	// consumed is the baseline's budget.consumed plus every footer's.
	consumed int64
	// ids are the footers added, in order; terms read "2000 (comment 101)".
	ids   []int64
	terms []string
	// notes are footers whose budget.before breaks the chain.
	notes []string
}

// chainBudget adds the footers since to the baseline, noting chain breaks.
func chainBudget(b Baseline, since []Event) budgetChain {
	c := budgetChain{consumed: b.Consumed}
	remaining := b.Remaining
	for _, e := range since {
		f := e.Footer
		if *f.Budget.Before != remaining {
			c.notes = append(c.notes, fmt.Sprintf("comment %d (%s, %s) says %d tokens remained before it, the chain says %d: tokens were "+
				"spent or granted that no footer shows; check budget.consumed",
				e.CommentID, f.Agent, f.Invocation, *f.Budget.Before, remaining))
		}
		c.consumed += *f.Budget.Consumed
		remaining = b.Total - c.consumed
		c.ids = append(c.ids, e.CommentID)
		c.terms = append(c.terms, fmt.Sprintf("%d (comment %d)", *f.Budget.Consumed, e.CommentID))
	}
	return c
}

// consumedSource explains budget.consumed; how says how footers were found.
func consumedSource(b Baseline, c budgetChain, how string) string {
	s := fmt.Sprintf("%s: %d", b.Source, b.Consumed)
	if len(c.terms) == 0 {
		return s + "; no agent footer since (" + how + ")"
	}
	return s + " + footers " + how + ": " + strings.Join(c.terms, " + ")
}

// newest is the last event, or nil.
func newest(events []Event) *Event {
	if len(events) == 0 {
		return nil
	}
	return &events[len(events)-1]
}
