package handoff

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
)

// TestEventsSince: the events since start after the last footer the
// baseline accounts for (same remaining and phase, posted no later than a
// minute after it); with none, after the baseline's time.
func TestEventsSince(t *testing.T) {
	evs := []Event{
		result(1, "a", "i1", 10000, 1000, now),
		result(2, "b", "i2", 9000, 500, now.Add(time.Minute)),
		result(3, "c", "i3", 8500, 500, now.Add(2*time.Minute)),
	}
	ids := func(es []Event) []int64 {
		var out []int64
		for _, e := range es {
			out = append(out, e.CommentID)
		}
		return out
	}
	base := Baseline{Phase: "implementation", Remaining: 8500, Written: now.Add(time.Minute + 30*time.Second)}
	since, how := eventsSince(base, evs)
	if !slices.Equal(ids(since), []int64{3}) || !strings.Contains(how, "after comment 2") {
		t.Errorf("since %v, how %q", ids(since), how)
	}
	// The same remaining in another phase, or posted long after the
	// baseline, is not the result it accounts for: its time decides.
	for _, b := range []Baseline{
		{Phase: "review", Remaining: 8500, Written: now.Add(30 * time.Second)},
		{Phase: "implementation", Remaining: 8500, Written: now.Add(-time.Hour)},
	} {
		since, how = eventsSince(b, evs)
		want := []int64{2, 3}
		if b.Written.Before(now) {
			want = []int64{1, 2, 3}
		}
		if !slices.Equal(ids(since), want) || !strings.HasPrefix(how, "posted after ") {
			t.Errorf("baseline %+v: since %v, how %q", b, ids(since), how)
		}
	}
	if since, _ := eventsSince(base, nil); len(since) != 0 {
		t.Errorf("since %v with no events", since)
	}
}

// TestChainBudget: every footer since adds its consumption; a footer whose
// budget.before is not what the chain says remained is a note.
func TestChainBudget(t *testing.T) {
	base := Baseline{Source: "ledger", Total: 10000, Consumed: 1000, Remaining: 9000}
	since := []Event{result(1, "a", "i1", 9000, 500, now), result(2, "b", "i2", 8000, 300, now)}
	c := chainBudget(base, since)
	if c.consumed != 1800 || !slices.Equal(c.ids, []int64{1, 2}) || len(c.notes) != 1 || !strings.Contains(c.notes[0], "comment 2 (b, i2) says 8000 tokens remained before it, the chain says 8500") {
		t.Errorf("chain %+v", c)
	}
	if got := consumedSource(base, c, "posted after x"); got != "ledger: 1000 + footers posted after x: 500 (comment 1) + 300 (comment 2)" {
		t.Errorf("source %q", got)
	}
	if got := consumedSource(base, chainBudget(base, nil), "posted after x"); got != "ledger: 1000; no agent footer since (posted after x)" {
		t.Errorf("source %q", got)
	}
}

// pieceInputs are a broken body with every field readable, one with
// none, and the newest footer.
func pieceInputs() (body, empty *checkpoint.Checkpoint, last Event) {
	last = result(9, "qa", "inv-9", 100, 10, now)
	last.Footer.Depth = ptr(int64(2))
	body = &checkpoint.Checkpoint{
		Depth: checkpoint.Int{Value: 1, Set: true}, LastAgent: set("dev"), LastInvocation: set("inv-4"),
		State:       checkpoint.State{Assignee: checkpoint.String{Value: "", Set: true}},
		CurrentTask: set("task"), NextAgent: set("qa"), NextEstimatedTokens: checkpoint.Int{Value: -5, Set: true},
		AgentChain: checkpoint.List[checkpoint.String]{Set: true, Items: []checkpoint.String{set("o"), set("dev")}},
		CreatedAt:  set("2026-05-01T00:00:00Z"),
	}
	return body, &checkpoint.Checkpoint{}, last
}

// TestDepthAndLastAgent: the newest footer's, else the body's, else a
// guess with a note.
func TestDepthAndLastAgent(t *testing.T) {
	body, empty, last := pieceInputs()
	if d := depthOf(&last, body); d.Value != 2 || !strings.Contains(d.Source, "comment 9") {
		t.Errorf("depth %+v", d)
	}
	if d := depthOf(nil, body); d.Value != 1 || d.Source != "the broken body (no agent comment says otherwise)" || d.Note != "" {
		t.Errorf("depth %+v", d)
	}
	if d := depthOf(nil, empty); d.Value != 0 || d.Note == "" {
		t.Errorf("depth %+v", d)
	}
	if a, i := lastAgentOf(nil, body); a.Value != "dev" || i.Value != "inv-4" || a.Note != "" {
		t.Errorf("last %+v %+v", a, i)
	}
	if a, i := lastAgentOf(nil, empty); a.Value != "recovery" || i.Value != "recovered" || a.Note == "" {
		t.Errorf("last %+v %+v", a, i)
	}
}

// TestAssigneeTaskChain: the body's when readable; an agent_chain that
// does not fit depth is left out.
func TestAssigneeTaskChain(t *testing.T) {
	body, empty, last := pieceInputs()
	// An empty assignee in the body is read as written, not replaced.
	if a := assigneeOf(body, &last); a.Value != "" || a.Source != fromBody {
		t.Errorf("assignee %+v", a)
	}
	if a := assigneeOf(empty, &last); a.Value != "lead-developer" || !strings.Contains(a.Source, "next_agent") {
		t.Errorf("assignee %+v", a)
	}
	if a := assigneeOf(empty, nil); a.Value != "" || !strings.HasPrefix(a.Source, "not recoverable") {
		t.Errorf("assignee %+v", a)
	}
	if task, ok := currentTaskOf(body); !ok || task.Value != "task" {
		t.Errorf("current_task %+v %v", task, ok)
	}
	if _, ok := currentTaskOf(empty); ok {
		t.Error("current_task from an empty body")
	}
	if c, ok := agentChainOf(body, 1); !ok || !slices.Equal(c.Value, []string{"o", "dev"}) {
		t.Errorf("agent_chain %+v %v", c, ok)
	}
	if _, ok := agentChainOf(body, 2); ok {
		t.Error("an agent_chain that does not fit depth was kept")
	}
}

// TestNextCreatedPhaseLabels: the remaining fields' fallbacks.
func TestNextCreatedPhaseLabels(t *testing.T) {
	body, _, last := pieceInputs()
	if n := nextAgentOf(nil, body); n.Value != "qa" {
		t.Errorf("next_agent %+v", n)
	}
	if n := nextEstimateOf(nil, body); n.Value != 0 {
		t.Errorf("next_estimated_tokens %+v", n)
	}
	if n := nextEstimateOf(&last, body); n.Value != 2000 {
		t.Errorf("next_estimated_tokens %+v", n)
	}
	if c := createdAtOf(body, now); c.Value != "2026-05-01T00:00:00Z" || c.Source != fromBody {
		t.Errorf("created_at %+v", c)
	}
	if c := createdAtOf(&checkpoint.Checkpoint{CreatedAt: set("May 1st")}, now.In(time.FixedZone("x", 7200))); c.Value != "2026-05-16T14:00:00Z" || !strings.HasPrefix(c.Source, "not recoverable") {
		t.Errorf("created_at %+v", c)
	}
	if p := phaseOf(Baseline{Phase: "impl", Source: "ledger"}, nil); p.Value != "impl" || p.Source != "ledger" {
		t.Errorf("phase %+v", p)
	}
	if got := liveLabels([]string{"b", "a", "b"}); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("labels %v", got)
	}
}

// TestRenderRefusesInvalid: a block that does not read back as a valid
// checkpoint is an error naming the problem, not a proposal.
func TestRenderRefusesInvalid(t *testing.T) {
	b := newBuilder()
	b.addInt("version", pick[int64]{Value: 2})
	if _, err := render(b.doc, 42, 3, nil); err == nil || !strings.Contains(err.Error(), "not valid") {
		t.Errorf("err %v", err)
	}
}
