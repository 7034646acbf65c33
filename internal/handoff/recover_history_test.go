package handoff

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/agentcomment"
	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// ledgerBase is the guard's ledger as it accepted the golden issue.
func ledgerBase() Baseline {
	return Baseline{Source: "the guard's ledger in its status comment 5", Version: 2, Issue: 42, Phase: "implementation",
		Total: 20000, Consumed: 6200, Remaining: 13800, Written: now.Add(-time.Hour)}
}

// brokenBody is the golden issue with its budget made unreadable and,
// when extra is not empty, that line added at the end of history_tail.
func brokenBody(t *testing.T, extra string) *checkpoint.Checkpoint {
	t.Helper()
	body := strings.Replace(issueBody(t), "remaining: 13800", "remaining: oops", 1)
	if extra != "" {
		body = strings.Replace(body, "  current_task:", extra+"\n  current_task:", 1)
	}
	r := checkpoint.Parse(body, checkpoint.Options{Issue: 42})
	if r.Valid() || r.Checkpoint == nil {
		t.Fatalf("the broken body is valid or unreadable: %v", r.Findings)
	}
	return r.Checkpoint
}

// proposedTail reads the proposal back and returns its history_tail as
// "agent/invocation" (or "agent/action" without an invocation).
func proposedTail(t *testing.T, p *Proposal) []string {
	t.Helper()
	r := checkpoint.Parse("```yaml\n"+p.YAML+"```\n", checkpoint.Options{Issue: 42, TailLimit: 100})
	if !r.Valid() {
		t.Fatalf("%v\n%s", r.Findings, p.YAML)
	}
	var out []string
	for _, e := range r.Checkpoint.HistoryTail.Items {
		id := e.Invocation.Value
		if id == "" {
			id = e.Action.Value
		}
		out = append(out, e.Agent.Value+"/"+id)
	}
	return out
}

// result is the event of a report on the golden issue's budget chain.
func result(id int64, agent, inv string, before, consumed int64, at time.Time) Event {
	remaining, next := before-consumed, "lead-developer"
	return Event{CommentID: id, Author: "agent-bot", Created: at, Footer: agentcomment.Footer{
		Agent: agent, Invocation: inv, EventType: EventResult, Phase: "implementation", Depth: ptr(int64(1)),
		Budget: &agentcomment.Spend{Before: &before, Consumed: &consumed, Remaining: &remaining},
		Status: "ok", Verdict: "ok", NextAgent: &next, NextEstimate: ptr(int64(2000)),
		Action: "did " + inv, Timestamp: at.UTC().Format(time.RFC3339),
	}}
}

func ptr[T any](v T) *T { return &v }

func hasNote(p *Proposal, s string) bool {
	for _, n := range p.Notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// TestReconstructKeepsEveryKnownEntry: no entry the recovery knows of is
// dropped, even when the tail grows past its limit; the guard archives
// the overflow on its next run, and the proposal says so.
func TestReconstructKeepsEveryKnownEntry(t *testing.T) {
	want := []string{"orchestrator/split the task", "architect/chose a token bucket", "lead-developer/inv-7", "code-reviewer/inv-8"}

	t.Run("four readable entries in the broken body", func(t *testing.T) {
		br := brokenBody(t, `    - {agent: code-reviewer, action: did inv-8, invocation: inv-8, timestamp: "2026-05-16T13:40:00Z"}`)
		p, err := Reconstruct(RecoverInput{Issue: 42, Baseline: ledgerBase(), Broken: br, Labels: live, TailLimit: 3, Created: now})
		if err != nil {
			t.Fatal(err)
		}
		if got := proposedTail(t, p); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("history_tail %v, want %v\n%s", got, want, p.YAML)
		}
		if !hasNote(p, "archive") {
			t.Errorf("no note says the guard archives the overflow: %v", p.Notes)
		}
	})

	t.Run("a three-entry tail and one footer since", func(t *testing.T) {
		ev := result(100, "code-reviewer", "inv-8", 13800, 1200, now)
		p, err := Reconstruct(RecoverInput{Issue: 42, Baseline: ledgerBase(), Events: []Event{ev}, Broken: brokenBody(t, ""),
			Labels: live, TailLimit: 3, Created: now})
		if err != nil {
			t.Fatal(err)
		}
		if got := proposedTail(t, p); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("history_tail %v, want %v\n%s", got, want, p.YAML)
		}
		if !hasNote(p, "archive") {
			t.Errorf("no note says the guard archives the overflow: %v", p.Notes)
		}
	})
}

// TestReconstructLeavesArchivedOut: an entry the guard's archives hold is
// not written into history_tail again, whether the body or a footer
// knows it.
func TestReconstructLeavesArchivedOut(t *testing.T) {
	evs := chain(t)
	base := Baseline{Source: "the guard's ledger in its status comment 5", Version: 2, Issue: 42, Phase: "implementation",
		Total: 20000, Consumed: 7400, Remaining: 12600, Written: now.Add(90 * time.Second)}
	body := brokenBody(t, "")
	older := prune.FromCheckpoint(body.HistoryTail.Items) // orchestrator, architect, inv-7
	inv8 := footerEntry(evs[0])

	for _, tt := range []struct {
		name     string
		archived []prune.Entry
		want     []string
		archNote string
	}{
		{"the body's entries archived", older,
			[]string{"code-reviewer/inv-8", "lead-developer/inv-9", "code-reviewer/inv-10"}, "3 known entries already in the guard's archive comments"},
		{"a reported entry archived too", append(slices.Clone(older), inv8),
			[]string{"lead-developer/inv-9", "code-reviewer/inv-10"}, "4 known entries already"},
		{"one of the body's entries archived", older[:1],
			[]string{"architect/chose a token bucket", "lead-developer/inv-7", "code-reviewer/inv-8", "lead-developer/inv-9", "code-reviewer/inv-10"}, "1 known entry already"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Reconstruct(RecoverInput{Issue: 42, Baseline: base, Events: evs, Broken: body, Archived: tt.archived,
				Labels: live, TailLimit: 3, Created: now})
			if err != nil {
				t.Fatal(err)
			}
			if got := proposedTail(t, p); !slices.Equal(got, tt.want) {
				t.Errorf("history_tail %v, want %v", got, tt.want)
			}
			if overflow := len(tt.want) > 3; overflow != hasNote(p, "archives the oldest") {
				t.Errorf("overflow %v, notes %v", overflow, p.Notes)
			}
			i := slices.IndexFunc(p.Fields, func(f Field) bool { return f.Key == "history_tail" })
			if i < 0 || !strings.Contains(p.Fields[i].Source, tt.archNote) {
				t.Errorf("fields %+v", p.Fields)
			}
		})
	}
}

// entries are body entries, "agent/invocation" (or "agent/action@time"
// without an invocation).
func bodyOf(ids ...string) *checkpoint.Checkpoint {
	cp := &checkpoint.Checkpoint{HistoryTail: checkpoint.List[checkpoint.Entry]{Set: true}}
	for i, id := range ids {
		e := parseID(id)
		cp.HistoryTail.Items = append(cp.HistoryTail.Items, checkpoint.Entry{
			Pos:   checkpoint.Pos{Line: 10 + i, Col: 7},
			Agent: set(e.Agent), Action: set(e.Action), Invocation: set(e.Invocation), Timestamp: set(e.Timestamp)})
	}
	return cp
}

func set(s string) checkpoint.String { return checkpoint.String{Value: s, Set: s != ""} }

// parseID reads "agent/inv" as an entry of a report by that invocation,
// and "agent/action@time" as one without an invocation.
func parseID(id string) prune.Entry {
	agent, rest, _ := strings.Cut(id, "/")
	if action, ts, ok := strings.Cut(rest, "@"); ok {
		return prune.Entry{Agent: agent, Action: action, Timestamp: ts}
	}
	return prune.Entry{Agent: agent, Action: "did " + rest, Invocation: rest, Timestamp: "2026-05-16T13:00:00Z"}
}

func eventsOf(ids ...string) []Event {
	var evs []Event
	for i, id := range ids {
		e := parseID(id)
		ev := result(int64(200+i), e.Agent, e.Invocation, 1000, 10, now.Add(time.Duration(i)*time.Minute))
		ev.Footer.Action, ev.Footer.Timestamp = e.Action, e.Timestamp
		evs = append(evs, ev)
	}
	return evs
}

func idsOf(es []knownEntry) []string {
	var out []string
	for _, e := range es {
		id := e.Invocation
		if id == "" {
			id = e.Action + "@" + e.Timestamp
		}
		out = append(out, e.Agent+"/"+id)
	}
	return out
}

// TestHistoryEntriesOrder: the footers' entries the body lacks are put
// where they belong among the body's, and nothing is written twice.
func TestHistoryEntriesOrder(t *testing.T) {
	const ts = "@2026-05-16T12:00:00Z"
	for _, tt := range []struct {
		name         string
		body, events []string
		archived     []string
		want         []string
		nArchived    int
	}{
		{name: "a lost middle entry goes back in its place",
			body: []string{"a/1", "c/3"}, events: []string{"a/1", "b/2", "c/3"}, want: []string{"a/1", "b/2", "c/3"}},
		{name: "new results follow the body",
			body: []string{"x/split" + ts, "y/2", "z/3"}, events: []string{"d/4"}, want: []string{"x/split" + ts, "y/2", "z/3", "d/4"}},
		{name: "before the body's entry of the next event",
			body: []string{"x/1", "a/2"}, events: []string{"d/9", "a/2", "e/10"}, want: []string{"x/1", "d/9", "a/2", "e/10"}},
		{name: "a footer posted twice is one entry",
			body: []string{"a/1"}, events: []string{"b/2", "b/2"}, want: []string{"a/1", "b/2"}},
		{name: "events out of the body's order add nothing twice",
			body: []string{"a/1", "b/2"}, events: []string{"b/2", "a/1"}, want: []string{"a/1", "b/2"}},
		{name: "an entry written twice in the body stays twice",
			body: []string{"a/run" + ts, "a/run" + ts}, want: []string{"a/run" + ts, "a/run" + ts}},
		{name: "archived entries are left out wherever they are known",
			body: []string{"a/1", "b/2"}, events: []string{"a/1", "b/2", "c/3"}, archived: []string{"a/1", "c/3"}, want: []string{"b/2"}, nArchived: 2},
		{name: "an archived entry stands for one of two written alike",
			body: []string{"a/run" + ts, "a/run" + ts}, archived: []string{"a/run" + ts}, want: []string{"a/run" + ts}, nArchived: 1},
		{name: "nothing known", want: nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var archived []prune.Entry
			for _, id := range tt.archived {
				archived = append(archived, parseID(id))
			}
			h := historyEntries(bodyOf(tt.body...), eventsOf(tt.events...), archived, now)
			if got := idsOf(h.entries); !slices.Equal(got, tt.want) {
				t.Errorf("entries %v, want %v", got, tt.want)
			}
			if h.archived != tt.nArchived {
				t.Errorf("%d archived entries left out, want %d", h.archived, tt.nArchived)
			}
			if len(h.notes) != 0 {
				t.Errorf("notes %v", h.notes)
			}
		})
	}
}

// TestBodyEntriesPartlyReadable: an entry is completed from the footer of
// its invocation, else given placeholders with a note; one with nothing
// that identifies it is noted; history and history_tail together lose
// neither.
func TestBodyEntriesPartlyReadable(t *testing.T) {
	br := bodyOf("a/1", "b/2", "c/3")
	br.HistoryTail.Items[0].Timestamp = checkpoint.String{Value: "yesterday", Set: true}
	br.HistoryTail.Items[1].Action = checkpoint.String{}
	br.HistoryTail.Items[2].Agent = checkpoint.String{}
	br.HistoryTail.Items = append(br.HistoryTail.Items, checkpoint.Entry{Pos: checkpoint.Pos{Line: 13}, Timestamp: set("2026-05-16T12:00:00Z")})
	evs := eventsOf("a/1")
	evs[0].Footer.Timestamp = "2026-05-16T12:34:00Z"

	h := historyEntries(br, evs, nil, now)
	got := h.entries
	if len(got) != 3 || got[0].Timestamp != "2026-05-16T12:34:00Z" || !strings.Contains(got[0].source, "its timestamp from the footer of comment 200") ||
		got[1].Action != unknownAction || got[2].Agent != unknownAgent {
		t.Errorf("entries %+v", got)
	}
	for _, want := range []string{"line 11 of the body has no readable action", "line 12 of the body has no readable agent", "line 13 of the body has no readable agent, action or invocation"} {
		if !slices.ContainsFunc(h.notes, func(n string) bool { return strings.Contains(n, want) }) {
			t.Errorf("no note %q in %v", want, h.notes)
		}
	}

	both := bodyOf("a/1", "b/2")
	both.History = checkpoint.List[checkpoint.Entry]{Set: true, Items: []checkpoint.Entry{both.HistoryTail.Items[1], bodyOf("c/3").HistoryTail.Items[0]}}
	h = historyEntries(both, nil, nil, now)
	if ids := idsOf(h.entries); !slices.Equal(ids, []string{"a/1", "b/2", "c/3"}) || len(h.notes) != 1 || !strings.Contains(h.notes[0], "both history_tail and history") {
		t.Errorf("entries %v, notes %v", ids, h.notes)
	}
}

// TestSameEntry: invocations decide when both entries carry one; else
// agent, action and timestamp.
func TestSameEntry(t *testing.T) {
	e := prune.Entry{Agent: "a", Action: "did", Invocation: "inv-1", Timestamp: "2026-05-16T12:00:00Z"}
	for _, tt := range []struct {
		name string
		edit func(*prune.Entry)
		same bool
	}{
		{"identical", func(*prune.Entry) {}, true},
		{"the action written differently", func(o *prune.Entry) { o.Action = "did it" }, true},
		{"another invocation", func(o *prune.Entry) { o.Invocation = "inv-2" }, false},
		{"another agent", func(o *prune.Entry) { o.Agent = "b" }, false},
		{"an unreadable agent", func(o *prune.Entry) { o.Agent = "" }, true},
		{"no invocation, the rest the same", func(o *prune.Entry) { o.Invocation = "" }, true},
		{"no invocation, another time", func(o *prune.Entry) { o.Invocation, o.Timestamp = "", "2026-05-16T12:00:01Z" }, false},
	} {
		o := e
		tt.edit(&o)
		if got := sameEntry(e, o); got != tt.same {
			t.Errorf("%s: sameEntry %v, want %v", tt.name, got, tt.same)
		}
	}
}

// TestFooterEntry: the entry a footer stands for, with the comment's time
// and the event type and verdict when the footer has no timestamp or
// action.
func TestFooterEntry(t *testing.T) {
	ev := result(7, "qa", "inv-3", 100, 10, now)
	if got := footerEntry(ev); got != (prune.Entry{Agent: "qa", Action: "did inv-3", Invocation: "inv-3", Timestamp: "2026-05-16T14:00:00Z"}) {
		t.Errorf("entry %+v", got)
	}
	ev.Footer.Action, ev.Footer.Timestamp, ev.Footer.Verdict = "", "soon", "pass"
	ev.Created = now.Add(time.Minute).In(time.FixedZone("x", 3600))
	if got := footerEntry(ev); got.Action != "subagent_result: pass" || got.Timestamp != "2026-05-16T14:01:00Z" {
		t.Errorf("entry %+v", got)
	}
}

func TestRuns(t *testing.T) {
	if got := runs([]string{"b", "b", "f1", "b", "f2", "f2"}); got != "b (2 entries), f1, b, f2 (2 entries)" {
		t.Errorf("runs %q", got)
	}
}
