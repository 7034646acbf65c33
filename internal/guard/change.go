package guard

import (
	"slices"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/issues"
)

// Change is what a set of writes does to an issue, as the next run reads
// it: the guard's own writes (Stable) or an agent's report (handoff).
type Change struct {
	// Body is the new body, or nil; an edit moves the content version by
	// one.
	Body *string
	// Remove and Add are the label names detached and attached; IDs are
	// labels whose ids are known (the server answered the attachment with
	// them): an attached label takes its id from there.
	Remove, Add []string
	IDs         []issues.Label
	// Locked says the issue is locked afterwards.
	Locked bool
	// Posted are comments appended at the end of the issue.
	Posted []issues.Comment
	// Status, when not nil, is the guard's status comment as written:
	// it takes the place of Existing (the one the run found), or, when
	// Moved or there is none, comes last.
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
