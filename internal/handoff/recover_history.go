package handoff

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// Placeholders for what nothing could read of an entry.
const (
	unknownAgent  = "unknown"
	unknownAction = "(not readable in the broken body)"
)

// knownEntry is an entry and where it was read.
type knownEntry struct {
	prune.Entry
	// source is fromBody, or the footer of a comment.
	source string
	// pos is zero for a footer's.
	pos checkpoint.Pos
}

// recoveredHistory is history_tail, its notes, and how many were archived
// already.
type recoveredHistory struct {
	entries  []knownEntry
	archived int
	notes    []string
}

// historyEntries lists every entry recovery knows of that the archives
// lack, in order: the broken body's, completed from footers, and the
// footers' missing ones, each before the body's next known event.
// Unreadable parts become placeholders with a note; created stands in for a
// lost timestamp.
func historyEntries(br *checkpoint.Checkpoint, events []Event, archived []prune.Entry, created time.Time) recoveredHistory {
	var h recoveredHistory
	body, notes := bodyEntries(br)
	h.notes = append(h.notes, notes...)
	for i := range body {
		complete(&body[i], events)
	}
	arch := archive{entries: archived, used: make([]bool, len(archived))}
	kept := slices.DeleteFunc(slices.Clone(body), func(k knownEntry) bool { return arch.claim(k.Entry) })
	var footers []knownEntry
	for _, e := range events {
		f := knownEntry{Entry: footerEntry(e), source: fmt.Sprintf("the footer of comment %d", e.CommentID)}
		if !arch.holds(f.Entry) && !slices.ContainsFunc(footers, func(o knownEntry) bool { return sameEntry(o.Entry, f.Entry) }) {
			footers = append(footers, f)
		}
	}
	h.archived = arch.count()
	h.entries = merge(kept, footers)
	for i := range h.entries {
		h.notes = append(h.notes, fillPlaceholders(&h.entries[i], created)...)
	}
	return h
}

// archive matches known entries against the guard's archives.
type archive struct {
	entries []prune.Entry
	// used marks the archived entries matched so far.
	used []bool
}

// claim reports whether an archived entry not claimed yet is e, and
// claims it: each archived entry stands for one body entry, as two
// entries may be written alike.
func (a *archive) claim(e prune.Entry) bool {
	for i, x := range a.entries {
		if !a.used[i] && sameEntry(x, e) {
			a.used[i] = true
			return true
		}
	}
	return false
}

// holds: a footer is one entry, however often it is posted.
func (a *archive) holds(e prune.Entry) bool {
	i := slices.IndexFunc(a.entries, func(x prune.Entry) bool { return sameEntry(x, e) })
	if i < 0 {
		return false
	}
	a.used[i] = true
	return true
}

// count is how many archived entries were matched.
func (a *archive) count() int {
	n := 0
	for _, u := range a.used {
		if u {
			n++
		}
	}
	return n
}

// bodyEntries reads the broken body's history entries: history_tail's,
// then those of history that history_tail does not hold (a body holding
// both, which is invalid, loses neither). An entry with no readable agent,
// action or invocation cannot be told from any other: it is left out with
// a note.
func bodyEntries(br *checkpoint.Checkpoint) ([]knownEntry, []string) {
	var out []knownEntry
	var notes []string
	both := br.HistoryTail.Set && br.History.Set
	if both {
		notes = append(notes, "the broken body holds both history_tail and history: the entries of both are kept, history_tail's first; check their order")
	}
	for _, list := range [][]checkpoint.Entry{br.HistoryTail.Items, br.History.Items} {
		for _, e := range list {
			k := knownEntry{Entry: prune.Entry{Agent: e.Agent.Value, Action: e.Action.Value, Invocation: e.Invocation.Value, Timestamp: e.Timestamp.Value},
				source: fromBody, pos: e.Pos}
			switch {
			case k.Agent == "" && k.Action == "" && k.Invocation == "":
				notes = append(notes, fmt.Sprintf("the history entry at line %d of the body has no readable agent, action or invocation: it "+
					"is not in the proposal; find it in the agents' comments and add it by hand", e.Pos.Line))
			case both && slices.ContainsFunc(out, func(o knownEntry) bool { return sameEntry(o.Entry, k.Entry) }):
				// history repeats an entry of history_tail
			default:
				out = append(out, k)
			}
		}
	}
	return out, notes
}

// complete fills the parts of a body entry that cannot be read from the
// footer of the same invocation, when there is one.
func complete(k *knownEntry, events []Event) {
	if k.Invocation == "" || (k.Agent != "" && k.Action != "" && isTimestamp(k.Timestamp)) {
		return
	}
	i := slices.IndexFunc(events, func(e Event) bool {
		return e.Footer.Invocation == k.Invocation && (k.Agent == "" || e.Footer.Agent == k.Agent)
	})
	if i < 0 {
		return
	}
	f := footerEntry(events[i])
	var filled []string
	for _, p := range []struct {
		name     string
		have     *string
		from     string
		readable bool
	}{
		{"agent", &k.Agent, f.Agent, k.Agent != ""},
		{"action", &k.Action, f.Action, k.Action != ""},
		{"timestamp", &k.Timestamp, f.Timestamp, isTimestamp(k.Timestamp)},
	} {
		if !p.readable && p.from != "" {
			*p.have = p.from
			filled = append(filled, p.name)
		}
	}
	if len(filled) > 0 {
		k.source = fmt.Sprintf("%s, its %s from the footer of comment %d", fromBody, strings.Join(filled, " and "), events[i].CommentID)
	}
}

// footerEntry is the history entry the report of e appended: its agent,
// action (event type and verdict when the footer has none), invocation
// and timestamp (the comment's time when the footer has none).
func footerEntry(e Event) prune.Entry {
	f := e.Footer
	action := f.Action
	if action == "" {
		action = fmt.Sprintf("%s: %s", f.EventType, f.Verdict)
	}
	ts := f.Timestamp
	if !isTimestamp(ts) {
		ts = rfc3339(e.Created)
	}
	return prune.Entry{Agent: f.Agent, Action: action, Invocation: f.Invocation, Timestamp: ts}
}

// sameEntry reports whether a and b are one history entry: the same
// invocation (and agent, when both are readable) when both carry one, else
// the same agent, action and timestamp.
func sameEntry(a, b prune.Entry) bool {
	if a.Invocation != "" && b.Invocation != "" {
		return a.Invocation == b.Invocation && (a.Agent == b.Agent || a.Agent == "" || b.Agent == "")
	}
	return a.Agent == b.Agent && a.Action == b.Action && a.Timestamp == b.Timestamp
}

// merge puts the footers' entries among the body's, keeping both orders:
// a footer's entry that the body holds marks a place in it, and the
// footers' entries the body lacks go just before the body's entry of the
// next such footer, or after the body's last entry when no footer after
// them is in the body.
func merge(body, footers []knownEntry) []knownEntry {
	out := make([]knownEntry, 0, len(body)+len(footers))
	claimed := make([]bool, len(body))
	next := 0 // the first body entry not yet written
	var pending []knownEntry
	for _, f := range footers {
		j := unclaimed(body, claimed, f)
		switch {
		case j < 0:
			pending = append(pending, f)
		case j >= next:
			claimed[j] = true
			out = append(out, body[next:j]...)
			out = append(out, pending...)
			out = append(out, body[j])
			next, pending = j+1, nil
		default:
			claimed[j] = true // already written, out of the footers' order
		}
	}
	out = append(out, body[next:]...)
	return append(out, pending...)
}

// unclaimed is the first body entry f not claimed by an earlier footer; -1
// if none.
func unclaimed(body []knownEntry, claimed []bool, f knownEntry) int {
	for j, k := range body {
		if !claimed[j] && sameEntry(k.Entry, f.Entry) {
			return j
		}
	}
	return -1
}

// fillPlaceholders fills the unreadable parts (created as timestamp) and
// says so.
func fillPlaceholders(k *knownEntry, created time.Time) []string {
	var notes []string
	where := k.source
	if k.pos.Line > 0 {
		where = fmt.Sprintf("the entry at line %d of the body", k.pos.Line)
	}
	if k.Agent == "" {
		k.Agent = unknownAgent
		notes = append(notes, fmt.Sprintf("history_tail: %s has no readable agent: %q written; check it", where, unknownAgent))
	}
	if k.Action == "" {
		k.Action = unknownAction
		notes = append(notes, fmt.Sprintf("history_tail: %s has no readable action: %q written; check it", where, unknownAction))
	}
	if !isTimestamp(k.Timestamp) {
		k.Timestamp = rfc3339(created)
		notes = append(notes, fmt.Sprintf("history_tail: %s has no readable timestamp: %s (the guard's first record on the issue) "+
			"written; check it", where, k.Timestamp))
	}
	return notes
}
