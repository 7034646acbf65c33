package guard

import (
	"slices"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/issues"
)

// Change is writes as the next run reads them: the guard's (Stable) or a
// report's (handoff).
type Change struct {
	// Body is the new body, or nil; it moves the content version by one.
	Body *string
	// Remove and Add are label names; IDs are ids the server answered an
	// attachment with.
	Remove, Add []string
	IDs         []issues.Label
	// Locked says the issue is locked afterwards.
	Locked bool
	// Posted are comments appended at the end of the issue.
	Posted []issues.Comment
	// Status, when set, replaces Existing, or comes last when Moved or
	// none exists.
	Status   *issues.Comment
	Existing *issues.Comment
	Moved    bool
	// Event, when not nil, is the event the writes cause.
	Event *issues.Event
}

// After is the decision input of the next run once ch is made: the same
// configuration, ledger and timeline, with the body, labels and comments
// as ch leaves them. A body written with a read hint is read through it.
func (in Input) After(ch Change) Input {
	issue := in.Issue
	hint := in.Hint
	if ch.Body != nil {
		issue.Body = *ch.Body
		issue.ContentVersion++
		if _, ok := checkpoint.Hint(issue.Body, in.Config.MaxCheckpointBytes); ok {
			hint.Missed = false
		}
	}
	issue.Labels = slices.DeleteFunc(slices.Clone(issue.Labels), func(l issues.Label) bool { return slices.Contains(ch.Remove, l.Name) })
	for _, name := range ch.Add {
		if !slices.ContainsFunc(issue.Labels, func(l issues.Label) bool { return l.Name == name }) {
			l := issues.Label{Name: name}
			if i := slices.IndexFunc(ch.IDs, func(x issues.Label) bool { return x.Name == name }); i >= 0 {
				l.ID = ch.IDs[i].ID
			}
			issue.Labels = append(issue.Labels, l)
		}
	}
	issue.Locked = issue.Locked || ch.Locked
	recent := append(slices.Clone(in.Recent), ch.Posted...)
	next := in
	if c := ch.Status; c != nil {
		if ex := ch.Existing; ex != nil {
			recent = slices.DeleteFunc(recent, func(x issues.Comment) bool { return x.ID == ex.ID })
		}
		if ex := ch.Existing; ex != nil && !ch.Moved {
			i := slices.IndexFunc(recent, func(x issues.Comment) bool { return x.ID > ex.ID })
			if i < 0 {
				i = len(recent)
			}
			recent = slices.Insert(recent, i, *c)
		} else {
			recent = append(recent, *c)
		}
		next.Status = c
	}
	issue.Comments = len(recent) + max(0, in.Issue.Comments-len(in.Recent))
	next.Issue = issue
	next.Recent = recent
	next.Hint = hint
	if ch.Event != nil {
		next.Event = *ch.Event
	}
	return next
}
