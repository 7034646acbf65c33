package guard

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/issues"
)

// The read hint (docs/ledger.md#the-read-hint) is a time in the checkpoint from
// which a run reads the comments in one request, without the timeline. Anyone
// who edits the body can change it, so ProveHint checks the answer itself;
// HintAt is the time an honest writer puts there.

// MaxHintComments bounds the comments a read through the hint may bring:
// an earlier time only makes the answer larger, and past this the reader
// reads the timeline instead (and the guard writes a fresh hint).
const MaxHintComments = 100

// Hint is the run's knowledge of the read hint.
type Hint struct {
	// At is the time a hint written by this run carries (HintAt of its
	// read); zero when not known: the run then writes none, and a body it
	// rewrites keeps the hint it had.
	At time.Time
	// Moved is HintAt of the read with no bound from the status comment:
	// the time a run carries that posts the status comment anew at the
	// end (it had fallen out of reach, StatusBuried). Bounded by the old
	// comment, which the run deletes, the hint would make every later
	// read answer with all the comments since it.
	Moved time.Time
	// Missed says the read took the timeline because the body's hint did
	// not prove the last comments: there was none, or its answer was not
	// complete (not for governance labels that moved, which only the
	// timeline says who moved). A run that accepts the state then writes
	// At (HintWrite).
	Missed bool
}

// HintAt is the time a read hint carries: the creation of the window-th newest
// comment of recent (oldest first), or the issue's opening when whole and there
// are fewer. It is never after the status comment's last update, so the read
// finds it. Zero when recent holds too few to say.
func HintAt(recent []issues.Comment, whole bool, opened time.Time, status *issues.Comment, window int) time.Time {
	cs := byCreation(recent)
	var at time.Time
	switch {
	case len(cs) >= max(window, 1):
		at = cs[len(cs)-max(window, 1)].CreatedAt
	case whole:
		at = opened
	}
	if at.IsZero() {
		return time.Time{}
	}
	if status != nil && !status.UpdatedAt.IsZero() && status.UpdatedAt.Before(at) {
		at = status.UpdatedAt
	}
	return at.UTC().Truncate(time.Second)
}

// StatusBuried reports whether the status comment is so far back among
// recent (the last comments read) and posted (those the run adds) that
// the next run, which reads the last window comments and comes after at
// least one more, may not see it: a run that writes its ledger then posts
// it anew at the end.
func StatusBuried(recent []issues.Comment, status *issues.Comment, posted []issues.Comment, window int) bool {
	after := 0
	all := append(slices.Clone(recent), posted...)
	for _, c := range all {
		if c.ID > status.ID {
			after++
		}
	}
	inReach := slices.ContainsFunc(all, func(c issues.Comment) bool { return c.ID == status.ID })
	return !inReach || after >= window-1
}

// ProveHint judges the answer for comments updated since (whole seconds,
// as Gitea compares). An update never precedes its creation, so the answer
// holds the last window comments when window were created since, and all
// when since precedes the opening. It returns those (recent) and older ones
// edited since (older). ok is false when it proves neither or holds over
// MaxHintComments.
func ProveHint(answer []issues.Comment, since, opened time.Time, window int) (recent, older []issues.Comment, all, ok bool) {
	since = since.Truncate(time.Second)
	all = !opened.IsZero() && !since.After(opened)
	for _, c := range byCreation(answer) {
		if all || (!c.CreatedAt.IsZero() && !c.CreatedAt.Before(since)) {
			recent = append(recent, c)
		} else {
			older = append(older, c)
		}
	}
	ok = (all || len(recent) >= max(window, 1)) && len(answer) <= MaxHintComments
	return recent, older, all, ok
}

// byCreation copies cs in timeline order: by creation, then id.
func byCreation(cs []issues.Comment) []issues.Comment {
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b issues.Comment) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}

// HintWrite writes the read hint alone: compare-and-swap, never a violation.
type HintWrite struct {
	// At is the time written; Body the body with it.
	At   time.Time
	Body string
}

// Write is the plan's write of the hint.
func (h *HintWrite) Write() Write {
	return Write{Kind: WriteHint, Detail: fmt.Sprintf(": comments since %s (compare-and-swap)", h.At.UTC().Format(time.RFC3339))}
}

// withHint: this run's read time, else the body's old hint.
func (e *decision) withHint(body string) string {
	return checkpoint.RewriteHint(e.in.Issue.Body, body, e.hintAt(), e.cfg.MaxCheckpointBytes)
}

// hintAt is bounded by the status comment unless the run reposts it last.
func (e *decision) hintAt() time.Time {
	h, st := e.in.Hint, e.in.Status
	if st != nil && !h.Moved.IsZero() && StatusBuried(e.in.Recent, st, nil, e.cfg.RecentWindow()) {
		return h.Moved
	}
	return h.At
}

// planHint plans the write of the read hint alone: when the read had to
// take the timeline for want of a hint that holds, and this run accepts
// the state with nothing to fix and no other body write. One request in
// that run, so that the next clean pass costs two whatever the timeline
// holds.
func (e *decision) planHint(pending []string) {
	h, p, at := e.in.Hint, e.plan, e.hintAt()
	if !h.Missed || at.IsZero() || p.Prune != nil || p.Fill != nil || len(p.Violations) > 0 || len(pending) > 0 || e.in.Issue.BodyTooLarge {
		return
	}
	body := checkpoint.WithHint(e.in.Issue.Body, at, e.cfg.MaxCheckpointBytes)
	if body != e.in.Issue.Body {
		p.Hint = &HintWrite{At: at, Body: body}
	}
}

// writesBody: a fill or hint write, not a prune; it moves the content
// version.
func (e *decision) writesBody() bool {
	f := e.plan.Fill
	return (f != nil && f.Number > 0) || e.plan.Hint != nil
}
