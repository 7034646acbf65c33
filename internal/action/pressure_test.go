package action_test

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/entryload"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
	tok "github.com/gns-guard/gns-guard/internal/tokens"
)

// checkpointBody is an issue body around a checkpoint with the given
// labels, history lines (already indented, "" for none) and estimate.
func checkpointBody(n int64, labels, history string, next int) string {
	return fmt.Sprintf("# Add rate limiting to the public API\n\nThe gateway needs per-token rate limits before the 2.0 release.\n\n```yaml\n"+`checkpoint:
  version: 2
  issue: %d
  phase: implementation
  depth: 1
  last_agent: lead-developer
  last_invocation: inv-20260516-1320-a7
  budget:
    total: 200000
    consumed: 60000
    remaining: 140000
  state:
    labels: [%s]
    assignee: lead-developer
%s  current_task: wire the limiter into the gateway config
  next_agent: code-reviewer
  next_estimated_tokens: %d
  created_at: "2026-05-16T12:50:00Z"
`+"```\n\nAcceptance: 429 with Retry-After, limits per key, metrics exported.\n", n, labels, history, next)
}

const shortTail = `  history_tail:
    - {agent: orchestrator, action: split the task into 3 subtasks, timestamp: "2026-05-16T12:58:00Z"}
    - {agent: architect, action: chose a token bucket per API key, timestamp: "2026-05-16T13:05:00Z"}
    - {agent: lead-developer, action: implemented middleware and tests, timestamp: "2026-05-16T13:20:00Z"}
`

// historyLines are k entries of a full history, from entry first on.
func historyLines(first, k int) string {
	agents := []string{"orchestrator", "architect", "lead-developer", "code-reviewer", "qa-engineer"}
	actions := []string{
		"split the task into subtasks and estimated each of them",
		"chose a token bucket per API key, refilled every second",
		"implemented the middleware with unit tests and a benchmark",
		"reviewed the middleware and asked for clearer names",
		"load-tested the gateway at 2k rps with no errors",
	}
	var b strings.Builder
	start := time.Date(2026, 5, 16, 13, 0, 0, 0, time.UTC)
	for i := first; i < first+k; i++ {
		fmt.Fprintf(&b, "    - {agent: %s, action: %q, invocation: inv-%04d, timestamp: %q}\n",
			agents[i%len(agents)], actions[i%len(actions)], i, start.Add(time.Duration(i)*time.Minute).Format(time.RFC3339))
	}
	return b.String()
}

// progressNote is a long plain comment, as agents post while they work:
// about tokens tokens of log excerpts.
func progressNote(t *testing.T, title string, target int) string {
	t.Helper()
	lines := []string{
		"- gateway p99 at 2k rps: 41 ms, no 5xx; bucket refill every second, burst 20",
		"- `go test ./internal/ratelimit/...`: 14 passed, coverage 87.4%, race detector clean",
		"- retry-after header set on every 429; clients back off as documented in docs/limits.md",
		"- key lookup cached for 30 s; cache hit ratio 97% over the soak test of 40 minutes",
	}
	var b strings.Builder
	b.WriteString("Progress on " + title + ":\n\n")
	for i := 0; tokens(t, b.String()) < target; i++ {
		for range 10 {
			b.WriteString(lines[i%len(lines)] + "\n")
			i++
		}
	}
	return b.String()
}

// entryLoad is an entry load worked out apart from the guard's own
// measure: the load `context` prints (entryload.Assemble) from the
// checkpoint block as stored after the run and the last three comments
// that are not the guard's own, picked here by author and marker, with the
// guard's figure in its footer settled until the load takes what the
// figure says; and the next task's tokens on top.
type entryLoad struct {
	checkpoint, entry, comments, next, total, max int
	ratio                                         float64
}

// measure works out the entry load of body with the issue's recent
// comments (oldest first), the guard's login being guard.
func measure(t *testing.T, body string, recent []actiontest.Comment, guard string, maxContext int) entryLoad {
	t.Helper()
	blk := block(t, body)
	m := nextEstimate.FindStringSubmatch(blk)
	if m == nil {
		t.Fatalf("no next_estimated_tokens in the checkpoint:\n%s", blk)
	}
	e := entryLoad{checkpoint: tokens(t, blk), max: maxContext}
	e.next, _ = strconv.Atoi(m[1])
	var size issues.TaskSize
	for _, name := range []string{"tiny", "small", "medium", "large"} {
		if s, _ := issues.TaskSizeNamed(name); s.MaxContext == int64(maxContext) {
			size = s
		}
	}
	number, _ := strconv.ParseInt(regexp.MustCompile(`(?m)^  issue: (\d+)$`).FindStringSubmatch(blk)[1], 10, 64)
	counter, err := tok.New(tok.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	in := entryload.Input{Issue: number, Agent: "code-reviewer", Checkpoint: blk, Counter: counter,
		Budget: entryload.LoadCap{Cap: int(size.Available()), Size: size.Name, MaxContext: int(size.MaxContext), Overhead: int(size.Overhead)}}
	for i := len(recent) - 1; i >= 0 && len(in.Comments) < 3; i-- {
		c := recent[i]
		if what := guardsOwn(c, guard, number); what != "" {
			in.Skipped = append(in.Skipped, entryload.Skipped{ID: c.ID, What: what})
			continue
		}
		in.Comments = append([]entryload.Comment{{ID: c.ID, Author: c.User.Login, Body: c.Body, URL: c.HTMLURL}}, in.Comments...)
	}
	g := entryload.GuardFigure{CheckpointTokens: e.checkpoint, NextEstimated: int64(e.next), TaskSize: size.Name, MaxContext: size.MaxContext}
	in.Guard = &g
	for range 8 {
		load, err := entryload.Assemble(in)
		if err != nil {
			t.Fatal(err)
		}
		g.CommentTokens = 0
		for _, s := range load.Sections {
			if s.Priority != entryload.P0 {
				g.CommentTokens += s.Tokens
			}
		}
		if load.Tokens == g.EntryTokens {
			break
		}
		g.EntryTokens = load.Tokens
		g.ContextTokens = int64(load.Tokens + e.next)
	}
	e.entry, e.comments = g.EntryTokens, g.CommentTokens
	e.total = e.entry + e.next
	e.ratio = math.Round(float64(e.total)/float64(maxContext)*10000) / 10000
	return e
}

// guardsOwn says which of the guard's comments c is (its author and one of
// its markers), or "".
func guardsOwn(c actiontest.Comment, guard string, n int64) string {
	if c.User.Login != guard {
		return ""
	}
	for what, marker := range map[string]string{"status": actiontest.StatusMarker(n), "recovery": actiontest.RecoveryMarker(n),
		"digest": fmt.Sprintf("<!-- gns-guard:digest issue=%d -->", n), "archive": fmt.Sprintf("<!-- gns-guard:archive issue=%d ", n)} {
		if strings.Contains(c.Body, marker) {
			return what
		}
	}
	return ""
}

// metrics is the context-budget record (docs/contract.md §7), every field of it.
type metrics struct {
	TS                string  `json:"ts"`
	Agent             string  `json:"agent"`
	Issue             int64   `json:"issue"`
	ContextLoaded     int     `json:"context_loaded"`
	ContextAvailable  int     `json:"context_available"`
	ContextRatio      float64 `json:"context_ratio"`
	CheckpointEntries int     `json:"checkpoint_entries"`
	Pruned            bool    `json:"pruned"`
}

// decodeMetrics reads a record, failing unless it has exactly docs/contract.md §7's fields.
func decodeMetrics(t *testing.T, line string) metrics {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &fields); err != nil {
		t.Fatalf("metrics record %q is not a JSON object: %v", line, err)
	}
	var keys []string
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"agent", "checkpoint_entries", "context_available", "context_loaded", "context_ratio", "issue", "pruned", "ts"}
	if !slices.Equal(keys, want) {
		t.Errorf("metrics record fields %v, want %v", keys, want)
	}
	var m metrics
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("metrics record %q: %v", line, err)
	}
	return m
}

// entryLine is how the status comment and the step summary show a load.
func entryLine(e entryLoad, size string) string {
	return fmt.Sprintf("**Entry context** %s of %s tokens (%.0f%%; %s task: entry load %s, of which the last 3 comments that are not the guard's %s, + next task %s)",
		thousands(e.total), thousands(e.max), e.ratio*100, size, thousands(e.entry), thousands(e.comments), thousands(e.next))
}

// checkFigures asserts that the run reported the entry load e, the one it
// judged, in its outputs, metrics record and step summary.
func checkFigures(t *testing.T, r actiontest.Result, e entryLoad, size string, n int64) {
	t.Helper()
	ratio := strconv.FormatFloat(e.ratio, 'f', 4, 64)
	for name, want := range map[string]string{
		"checkpoint-tokens": strconv.Itoa(e.checkpoint),
		"context-tokens":    strconv.Itoa(e.total),
		"context-ratio":     ratio,
	} {
		if got := r.Outputs[name]; got != want {
			t.Errorf("output %s = %q, but the load context prints gives %q (entry load %d, its comments %d, + next task %d)",
				name, got, want, e.entry, e.comments, e.next)
		}
	}
	m := decodeMetrics(t, r.Outputs["metrics"])
	if m.Issue != n || m.ContextLoaded != e.total || m.ContextAvailable != e.max || m.ContextRatio != e.ratio || m.Agent != "code-reviewer" {
		t.Errorf("metrics %+v, want issue %d, agent code-reviewer, context %d of %d (%v)", m, n, e.total, e.max, e.ratio)
	}
	if line := entryLine(e, size); !strings.Contains(r.Summary, line) {
		t.Errorf("the step summary lacks %q:\n%s", line, r.Summary)
	}
}

// checkStatus asserts that the status comment shows the entry load of the
// issue as the run left it: the stored checkpoint and the last three
// comments now, the status comment itself among them when it is recent.
// That is the load the next agent meets, and what the next run will judge.
func checkStatus(t *testing.T, f fixture, n int64, maxContext int, size string) (actiontest.Comment, entryLoad) {
	t.Helper()
	status := f.Status(t, n)
	e := measure(t, f.Issue(t, n).Body, f.LastComments(t, n, 8), f.Guard().Login, maxContext)
	if line := entryLine(e, size); !strings.Contains(status.Body, line) {
		t.Errorf("the status comment lacks %q (the load as the run left the issue):\n%s", line, status.Body)
	}
	return status, e
}

// TestPressureGateFollowsTheLastThreeComments: on a small task (6000
// tokens, gate at 60%), three long progress notes push the next agent's
// entry load over the gate: context::pressure-high is set and the run
// fails. A short reply later pushes two of them out of the last three
// comments (the guard's own status comment, now among the last three,
// counts with the text it had): the label goes and the run passes. Every
// figure equals what `gns-guard tokens` prints for the same text.
func TestPressureGateFollowsTheLastThreeComments(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	metricsFile := filepath.Join(t.TempDir(), "context-budget.jsonl")
	run := func(d actiontest.Delivery) actiontest.Result {
		return f.Run(t, d, "metrics-file", metricsFile)
	}
	const maxContext, gate = 6000, 3600
	n, d := f.Open(t, t.Name(), func(n int64) string {
		return checkpointBody(n, "cascade::depth-2, size::small", shortTail, 1000)
	}, "cascade::depth-2", "size::small")

	// No comments yet: the checkpoint and the next task only.
	r := run(d)
	r.Expect(t, 0, "pass")
	r.ExpectRules(t)
	checkFigures(t, r, measure(t, f.Issue(t, n).Body, nil, f.Bot, maxContext), "small", n)

	// Three long notes.
	for i := 1; i <= 3; i++ {
		_, d = f.Comment(t, n, agent, progressNote(t, fmt.Sprintf("step %d", i), 1300))
	}
	recent := f.LastComments(t, n, 8)
	r = run(d)
	e := measure(t, f.Issue(t, n).Body, recent, f.Bot, maxContext)
	if e.total <= gate {
		t.Fatalf("the test's notes are too short: entry load %d is not over the gate of %d", e.total, gate)
	}
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "context-pressure")
	checkFigures(t, r, e, "small", n)
	status, settled := checkStatus(t, f, n, maxContext, "small")
	if settled.total <= gate {
		t.Errorf("the status comment shows a load of %d, under the gate, on a run that failed for pressure", settled.total)
	}
	want := fmt.Sprintf("the next agent would load %d tokens (entry load %d, of which the last 3 comments that are not the guard's %d, + next task %d), %.0f%% of the 6000 a small task may use, over the pressure threshold of 60%%",
		e.total, e.entry, e.comments, e.next, e.ratio*100)
	if v := r.Violations(t)[0]; v.Message != want {
		t.Errorf("violation message\n%q\nwant\n%q", v.Message, want)
	}
	if !f.Issue(t, n).Has("context::pressure-high") {
		t.Fatalf("context::pressure-high was not set\n%s", r.String())
	}
	if !strings.Contains(r.Stdout, fmt.Sprintf("issue#%d:", n)) || !strings.Contains(r.Stdout, "[context-pressure]") {
		t.Errorf("the log has no located context-pressure line:\n%s", r.Stdout)
	}

	// Two short replies: the last three are now the third note and the
	// replies. (The status comment, posted by the first run, lies before
	// the notes.)
	f.Comment(t, n, agent, "Thanks, continuing with the config wiring.")
	replyID, d := f.Comment(t, n, agent, "Config wiring next; the notes above stay as they are.")
	recent = f.LastComments(t, n, 8)
	if last3 := recent[len(recent)-3:]; last3[2].ID != replyID || last3[0].ID == status.ID {
		t.Fatalf("expected the third note and the two replies to be the last three comments, got %d, %d and %d", last3[0].ID, last3[1].ID, last3[2].ID)
	}
	r = run(d)
	e = measure(t, f.Issue(t, n).Body, recent, f.Bot, maxContext)
	if e.total > gate {
		t.Fatalf("the entry load %d is still over the gate of %d", e.total, gate)
	}
	r.Expect(t, 0, "pass")
	r.ExpectRules(t)
	checkFigures(t, r, e, "small", n)
	if f.Issue(t, n).Has("context::pressure-high") {
		t.Errorf("context::pressure-high stayed after the load went down\n%s", r.String())
	}
	if got := f.Status(t, n); got.ID != status.ID || !strings.Contains(got.Body, "all clear") {
		t.Errorf("the status comment %d (was %d) was not resolved in place:\n%s", got.ID, status.ID, got.Body)
	}

	// One record per run, the same as the metrics output.
	lines := readLines(t, metricsFile)
	if len(lines) != 3 {
		t.Fatalf("metrics-file has %d lines after 3 runs:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	if lines[2] != r.Outputs["metrics"] {
		t.Errorf("the last metrics line\n%s\ndiffers from the metrics output\n%s", lines[2], r.Outputs["metrics"])
	}
	for _, l := range lines {
		m := decodeMetrics(t, l)
		ts, err := time.Parse(time.RFC3339, m.TS)
		if err != nil || time.Since(ts) > 10*time.Minute || time.Until(ts) > time.Minute {
			t.Errorf("metrics ts %q is not the time of the run (%v)", m.TS, err)
		}
		if m.CheckpointEntries != 3 || m.Pruned {
			t.Errorf("metrics %+v: want 3 checkpoint entries, not pruned", m)
		}
	}
}

// TestPruningClearsPressure: on a large task (20000 tokens, gate at 60%,
// checkpoint overhead 1500) a checkpoint just under its overhead and two
// long notes put the entry load just over the gate. When the history grows
// past the overhead, the guard prunes it in the same run: the gate measures
// the pruned checkpoint the next agent will load, and clears.
func TestPruningClearsPressure(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	metricsFile := filepath.Join(t.TempDir(), "context-budget.jsonl")
	const maxContext, gate, overhead = 20000, 12000, 1500
	labels := "cascade::depth-2, size::large"
	notes := []string{progressNote(t, "the limiter", 4000), progressNote(t, "the soak test", 4000)}
	noteTokens := tokens(t, notes[0]) + tokens(t, notes[1])

	// Grow the history to just under the overhead, then pick the estimate
	// that puts the load 100 tokens over the gate.
	var entries int
	var body string
	n, _ := f.Open(t, t.Name(), func(n int64) string {
		for entries = 1; ; entries++ {
			if tokens(t, block(t, checkpointBody(n, labels, "  history:\n"+historyLines(0, entries+1), 3000))) > overhead-60 {
				break
			}
		}
		next := 3000
		for range 4 {
			body = checkpointBody(n, labels, "  history:\n"+historyLines(0, entries), next)
			next = gate + 100 - tokens(t, block(t, body)) - noteTokens
		}
		return body
	}, "cascade::depth-2", "size::large")
	var d actiontest.Delivery
	for _, note := range notes {
		_, d = f.Comment(t, n, agent, note)
	}
	recent := f.LastComments(t, n, 8)
	r := f.Run(t, d, "metrics-file", metricsFile)
	e := measure(t, f.Issue(t, n).Body, recent, f.Bot, maxContext)
	if e.total <= gate || e.checkpoint > overhead {
		t.Fatalf("test setup: entry load %d should be over %d with a checkpoint of %d tokens under %d", e.total, gate, e.checkpoint, overhead)
	}
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "context-pressure")
	checkFigures(t, r, e, "large", n)
	status, _ := checkStatus(t, f, n, maxContext, "large")
	if r.Outputs["pruned"] != "false" || !f.Issue(t, n).Has("context::pressure-high") {
		t.Fatalf("expected no prune and the pressure label\n%s", r.String())
	}

	// Four more entries take the checkpoint over its overhead.
	cur := f.Issue(t, n).Body
	grown := strings.Replace(cur, "  current_task:", historyLines(entries, 4)+"  current_task:", 1)
	if tokens(t, block(t, grown)) <= overhead {
		t.Fatalf("test setup: the grown checkpoint takes %d tokens, not over %d", tokens(t, block(t, grown)), overhead)
	}
	d = f.EditBody(t, n, f.Admin(), grown)
	recent = f.LastComments(t, n, 8)
	r = f.Run(t, d, "metrics-file", metricsFile)
	after := f.Issue(t, n)
	e = measure(t, after.Body, recent, f.Bot, maxContext)
	r.Expect(t, 0, "pass")
	r.ExpectRules(t)
	if r.Outputs["pruned"] != "true" || r.Outputs["archive-comment-ids"] == "[]" {
		t.Fatalf("expected the checkpoint to be pruned\n%s", r.String())
	}
	if !strings.Contains(block(t, after.Body), "history_tail:") || strings.Contains(block(t, after.Body), "  history:") {
		t.Errorf("the stored checkpoint was not pruned to a history_tail:\n%s", after.Body)
	}
	checkFigures(t, r, e, "large", n)
	if e.total > gate {
		t.Errorf("entry load %d after pruning, still over %d", e.total, gate)
	}
	if after.Has("context::pressure-high") {
		t.Errorf("context::pressure-high stayed after pruning\n%s", r.String())
	}
	if got := f.Status(t, n); got.ID != status.ID || !strings.Contains(got.Body, "all clear") {
		t.Errorf("the status comment %d (was %d) was not resolved in place:\n%s", got.ID, status.ID, got.Body)
	}
	lines := readLines(t, metricsFile)
	if len(lines) != 2 {
		t.Fatalf("metrics-file has %d lines after 2 runs", len(lines))
	}
	m := decodeMetrics(t, lines[1])
	if !m.Pruned || m.ContextLoaded != e.total || m.CheckpointEntries != 3 {
		t.Errorf("metrics after the prune %+v: want pruned, context %d, 3 entries (the pruned checkpoint's)", m, e.total)
	}
	if m := decodeMetrics(t, lines[0]); m.Pruned || m.CheckpointEntries != entries {
		t.Errorf("metrics before the prune %+v: want not pruned, %d entries", m, entries)
	}
}

// TestStatusCommentNeverContradictsTheRun: three notes put the entry load
// just over the gate; the status comment the failing run posts comes after
// them, and is shorter than the oldest. It is the guard's own and not part
// of the entry load, so it pushes no note out: the status comment reports
// the failure this run found, with this run's figures, and on every later
// run says all clear exactly when the run passed.
func TestStatusCommentNeverContradictsTheRun(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	const maxContext, gate = 6000, 3600
	n, _ := f.Open(t, t.Name(), func(n int64) string {
		return checkpointBody(n, "cascade::depth-2, size::small", shortTail, 1000)
	}, "cascade::depth-2", "size::small")
	var d actiontest.Delivery
	// The oldest note is the longest: were the status comment counted, it
	// would push it out of the last three.
	for i, size := range []int{1500, 700, 700} {
		_, d = f.Comment(t, n, agent, progressNote(t, fmt.Sprintf("step %d", i+1), size))
	}
	recent := f.LastComments(t, n, 8)
	r := f.Run(t, d)
	e := measure(t, f.Issue(t, n).Body, recent, f.Bot, maxContext)
	if e.total <= gate || e.total-tokens(t, recent[len(recent)-3].Body) > gate-250 {
		t.Fatalf("test setup: the load %d should be over %d, and under it by 250 without the oldest note", e.total, gate)
	}
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "context-pressure")
	// The status comment shows the load as the run left the issue (its
	// footer names the status comment left out).
	status, settled := checkStatus(t, f, n, maxContext, "small")
	if !strings.Contains(status.Body, "❌ gns-guard: 1 violation(s)") || settled.total <= gate {
		t.Errorf("the status comment of a run that failed for pressure at %s does not say so:\n%s", entryLine(e, "small"), status.Body)
	}
	if !f.Issue(t, n).Has("context::pressure-high") {
		t.Errorf("context::pressure-high was not set")
	}
	// Re-runs judge the issue with the status comment among the last comments.
	for range 2 {
		r = f.Run(t, d)
		clear := strings.Contains(f.Status(t, n).Body, "all clear")
		if clear != (r.Code == 0) || f.Issue(t, n).Has("context::pressure-high") != (r.Code == 1) {
			t.Errorf("exit %d, but the status comment says all clear: %v and the pressure label is set: %v\n%s",
				r.Code, clear, f.Issue(t, n).Has("context::pressure-high"), r.String())
		}
	}
}
