package checkpoint

import (
	"strings"
	"testing"
	"time"
)

const rewriteBody = "# Title\n\nSome text before.\n\n" +
	"```yaml\n" +
	`# head comment kept
checkpoint:
  version: 2
  issue: 7
  phase: build
  depth: 0
  last_agent: orchestrator
  last_invocation: inv-9
  budget:
    total: 1000
    consumed: 900 # nearly spent
    remaining: 100
  state:
    labels: [cascade::depth-1, size::small]
    assignee: orchestrator
  # history comment kept
  history:
    - {agent: a1, action: "one: first", invocation: i1, timestamp: "2026-01-01T00:00:00Z"}
    - agent: a2
      action: two
      timestamp: 2026-01-02T00:00:00Z
    - {agent: a3, action: three}
    - {agent: a4, action: four, invocation: i4}
  agent_chain: [orchestrator]
  next_agent: ""
  next_estimated_tokens: 0
  created_at: 2026-01-01T00:00:00Z
` + "```\n\nText after | with `code`.\n"

var rewriteNow = time.Date(2026, 5, 17, 8, 0, 0, 0, time.UTC)

func mustParse(t *testing.T, body string) Result {
	t.Helper()
	r := Parse(body, Options{})
	if !r.Valid() {
		t.Fatalf("body is not valid: %v", r.Findings)
	}
	return r
}

// rewrite applies every edit and writes the block back into the body.
func rewrite(t *testing.T, body string, n int) (string, []Entry) {
	t.Helper()
	r := mustParse(t, body)
	cp, removed := r.Checkpoint.WithTail(n, rewriteNow)
	cp = cp.WithBudget(50, 0, 50).WithLabels([]string{"b::x", "a::y"})
	text, err := cp.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return r.Block().Replace(text), removed
}

func TestRewriteKeepsOutside(t *testing.T) {
	for _, nl := range []string{"\n", "\r\n"} {
		body := strings.ReplaceAll(rewriteBody, "\n", nl)
		out, removed := rewrite(t, body, 2)
		b := mustParse(t, body).Block()
		nb := mustParse(t, out).Block()
		if out[:b.Start] != body[:b.Start] || out[nb.End:] != body[b.End:] {
			t.Errorf("newline %q: bytes outside the block changed:\n%s", nl, out)
		}
		if out[nb.Start:nb.ContentStart] != body[b.Start:b.ContentStart] {
			t.Errorf("newline %q: opening fence changed", nl)
		}
		if nl == "\r\n" && strings.Count(out, "\n") != strings.Count(out, "\r\n") {
			t.Errorf("CRLF body got LF lines:\n%q", out)
		}
		if len(removed) != 2 || removed[0].Agent.Value != "a1" || removed[1].Agent.Value != "a2" {
			t.Errorf("removed = %+v", removed)
		}
		if removed[0].Pos.Line != 23 {
			t.Errorf("removed entry keeps its body position: line %d, want 23", removed[0].Pos.Line)
		}
	}
}

func TestRewriteContent(t *testing.T) {
	out, _ := rewrite(t, rewriteBody, 2)
	r := mustParse(t, out)
	cp := r.Checkpoint
	for _, want := range []string{
		"# head comment kept\ncheckpoint:",
		"  # history comment kept\n  history_tail:\n",
		"consumed: 0 # nearly spent",
		"labels: [b::x, a::y]",
		`- {agent: a3, action: three, timestamp: "2026-05-17T08:00:00Z"}`,
		`- {agent: a4, action: four, invocation: i4, timestamp: "2026-05-17T08:00:00Z"}`,
		"agent_chain: [orchestrator]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rewritten body lacks %q:\n%s", want, out)
		}
	}
	if cp.History.Set || len(cp.HistoryTail.Items) != 2 {
		t.Fatalf("history %v, tail %d entries", cp.History.Set, len(cp.HistoryTail.Items))
	}
	if b := cp.Budget; b.Total.Value != 50 || b.Consumed.Value != 0 || b.Remaining.Value != 50 {
		t.Errorf("budget = %+v", b)
	}
	if got := cp.HistoryTail.Items[1].Invocation.Value; got != "i4" {
		t.Errorf("invocation lost: %q", got)
	}
}

func TestRewriteLeavesOriginal(t *testing.T) {
	r := mustParse(t, rewriteBody)
	before, err := r.Checkpoint.Encode()
	if err != nil {
		t.Fatal(err)
	}
	cp, _ := r.Checkpoint.WithTail(1, rewriteNow)
	cp.WithBudget(1, 1, 0).WithLabels(nil)
	after, err := r.Checkpoint.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if before != after || len(r.Checkpoint.History.Items) != 4 || r.Checkpoint.Budget.Total.Value != 1000 {
		t.Errorf("the original checkpoint changed")
	}
}

func TestRewriteTrimsTail(t *testing.T) {
	body := strings.Replace(rewriteBody, "  history:\n", "  history_tail:\n", 1)
	body = strings.ReplaceAll(body, `, action: three}`, `, action: three, timestamp: "2026-01-03T00:00:00Z"}`)
	body = strings.ReplaceAll(body, `invocation: i4}`, `invocation: i4, timestamp: "2026-01-04T00:00:00Z"}`)
	r := Parse(body, Options{})
	if !r.Valid() {
		t.Fatalf("%v", r.Findings)
	}
	cp, removed := r.Checkpoint.WithTail(3, rewriteNow)
	if len(removed) != 1 || removed[0].Agent.Value != "a1" || len(cp.HistoryTail.Items) != 3 {
		t.Fatalf("removed %d, kept %d", len(removed), len(cp.HistoryTail.Items))
	}
	text, err := cp.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "2026-05-17") {
		t.Errorf("a trimmed tail got new timestamps:\n%s", text)
	}
	// Already short enough: nothing removed, nothing changed.
	same, removed := r.Checkpoint.WithTail(4, rewriteNow)
	if len(removed) != 0 {
		t.Errorf("removed %d from a short tail", len(removed))
	}
	a, _ := same.Encode()
	b, _ := r.Checkpoint.Encode()
	if a != b {
		t.Errorf("a short tail was changed")
	}
}

func TestRewriteUnchangedRoundTrip(t *testing.T) {
	// Encoding an untouched checkpoint and writing it back keeps the body.
	r := mustParse(t, rewriteBody)
	text, err := r.Checkpoint.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Block().Replace(text); got != rewriteBody {
		t.Errorf("round trip changed the body:\n%s", got)
	}
}

func TestRewriteIndentedFence(t *testing.T) {
	body := "- item\n\n   ```yml\n   checkpoint:\n     version: 2\n     issue: 7\n     phase: p\n     depth: 0\n     last_agent: a\n     last_invocation: i\n     budget: {total: 10, consumed: 9, remaining: 1}\n     state: {labels: [x], assignee: a}\n     history: [{agent: a, action: b}, {agent: c, action: d}]\n     next_agent: b\n     next_estimated_tokens: 0\n     created_at: 2026-01-01T00:00:00Z\n   ```\nafter\n"
	out, _ := rewrite(t, body, 1)
	r := mustParse(t, out)
	if got := r.Checkpoint.HistoryTail.Items; len(got) != 1 || got[0].Agent.Value != "c" {
		t.Fatalf("tail = %+v\n%s", got, out)
	}
	if !strings.HasPrefix(out, "- item\n\n   ```yml\n   checkpoint:\n") || !strings.HasSuffix(out, "   ```\nafter\n") {
		t.Errorf("indentation or surroundings changed:\n%s", out)
	}
	if !strings.Contains(out, "budget: {total: 50, consumed: 0, remaining: 50}") {
		t.Errorf("flow-style budget not kept:\n%s", out)
	}
}

func TestEncodeQuotesWhenNeeded(t *testing.T) {
	r := mustParse(t, rewriteBody)
	cp := r.Checkpoint.WithLabels([]string{"a::b", "123", "with space", "x: y", "@at", "true"})
	text, err := cp.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got := Parse(r.Block().Replace(text), Options{})
	if !got.Valid() {
		t.Fatalf("%v\n%s", got.Findings, text)
	}
	var labels []string
	for _, l := range got.Checkpoint.State.Labels.Items {
		labels = append(labels, l.Value)
	}
	if strings.Join(labels, "|") != "a::b|123|with space|x: y|@at|true" {
		t.Errorf("labels read back as %q\n%s", labels, text)
	}
}

func TestEncodeNoDocument(t *testing.T) {
	if _, err := (&Checkpoint{}).Encode(); err != ErrNoDocument {
		t.Errorf("err = %v", err)
	}
	cp, removed := (&Checkpoint{}).WithTail(3, rewriteNow)
	if cp == nil || removed != nil {
		t.Errorf("WithTail on a hand-built checkpoint")
	}
}
