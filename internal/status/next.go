package status

import (
	"slices"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// NextInput is the input of the guard's next run once a run that decided p
// on in has written as the action writes: a placeholder if none, then
// Plan.Writes in order, then the settled status comment. New comments take
// the next ids, stamped now; ev is the next event. `report` judges its
// prediction with it (handoff.Predict).
func NextInput(in guard.Input, p *guard.Plan, ev issues.Event, now time.Time) guard.Input {
	if !p.Governed {
		next := in
		next.Event = ev
		return next
	}
	id := lastID(in)
	post := func(body string) issues.Comment {
		id++
		return issues.Comment{ID: id, Author: in.Self, Body: body, CreatedAt: now, UpdatedAt: now}
	}
	existing := in.Status
	var posted []issues.Comment
	if NeedsPlaceholder(p, existing) {
		c := post(Placeholder(in, p, now))
		posted, existing = append(posted, c), &c
	}
	n := in.Issue.Number
	var have map[int]int64
	if p.Prune != nil {
		have = guard.MatchArchives(in, p.Prune).Have
	}
	// The writes in the order the action makes them (Plan.Writes): the
	// comments take their ids in that order; the body, labels and lock
	// are the Change below.
	for _, w := range p.Writes() {
		switch w.Kind {
		case guard.PostArchive:
			if _, ok := have[w.Part]; !ok {
				posted = append(posted, post(p.Prune.Archives[w.Part-1]))
			}
		case guard.PostRecovery:
			if !guardHas(in, func(c issues.Comment) bool {
				return strings.Contains(c.Body, issues.RecoveryMarker(n)) && !strings.Contains(c.Body, prune.MarkerPrefix)
			}) {
				posted = append(posted, post(p.Recovery))
			}
		case guard.PostDigest:
			if !guardHas(in, func(c issues.Comment) bool { return strings.TrimSpace(c.Body) == strings.TrimSpace(p.Digest) }) {
				posted = append(posted, post(p.Digest))
			}
		}
	}
	a := Applied{Posted: posted, Pruned: p.Prune != nil, Hinted: p.Hint != nil, Locked: p.Lock != ""}
	ch := guard.Change{Remove: issues.NamesOf(p.RemoveLabels), Add: p.AddLabels, Locked: a.Locked, Posted: posted, Event: &ev}
	switch {
	case p.Prune != nil:
		ch.Body = &p.Prune.Body
	case p.Hint != nil:
		ch.Body = &p.Hint.Body
	}
	if st := PlanWrite(in, p, existing, a, now); st.Do {
		c := statusAfter(in.Self, st.Body, existing, st.Moved, now)
		if existing == nil || st.Moved {
			c.ID = post("").ID
		}
		ch.Status, ch.Existing, ch.Moved = &c, existing, st.Moved
	}
	return in.After(ch)
}

// lastID is the highest comment id the run knows of.
func lastID(in guard.Input) int64 {
	var id int64
	for _, c := range append(slices.Clone(in.Older), in.Recent...) {
		id = max(id, c.ID)
	}
	if in.Status != nil {
		id = max(id, in.Status.ID)
	}
	return id
}

// guardHas checks the guard's own recent comments.
func guardHas(in guard.Input, match func(issues.Comment) bool) bool {
	return slices.ContainsFunc(in.Recent, func(c issues.Comment) bool { return c.Author == in.Self && match(c) })
}
