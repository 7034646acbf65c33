package handoff

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gns-guard/gns-guard/internal/receipt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// Report is an agent's parsed exit flags.
type Report struct {
	// Agent and Invocation name the agent and this run of it; Action says
	// what it did (the comment keeps it whole, the history entry its
	// first line).
	Agent, Invocation, Action string
	// Consumed is the tokens this invocation used.
	Consumed int64
	// Status is "ok" or "failed"; an empty Verdict means the status.
	Status, Verdict string
	// FilesChanged is the number of files the agent changed.
	FilesChanged int64
	// KeyStats is text or a JSON object, shown in digests.
	KeyStats string
	// NextAgent "" and NextEstimate 0 mean the workflow is done.
	NextAgent    string
	NextEstimate int64
	// Result is shown as JSON when it is JSON, else as text.
	Result string
	// Phase and Depth, when set, move the checkpoint to them.
	Phase string
	Depth *int64
	// LabelsAdd and LabelsRemove change the issue's labels; Assignee, when
	// set, becomes state.assignee and the issue's assignee. Without it
	// state.assignee follows the handoff: it becomes NextAgent.
	LabelsAdd, LabelsRemove []string
	Assignee                *string
	// CurrentTask, when set, becomes current_task: the next agent's task.
	CurrentTask *string
	// Now stamps the history entry.
	Now time.Time
	// Receipt goes in the footer; nil without a meter.
	Receipt *receipt.Receipt
	// Speaker is the agent's login the gate verified, when the gate
	// writes for it (docs/gate.md); the comment's header names it.
	Speaker string
	// Cascade are the sub-agents the gate opened under this invocation,
	// with what the meter charged them: the result's cascade log.
	Cascade []Spawned
}

// Spawned is a sub-agent the gate opened: its invocation, agent, depth,
// estimate and what the meter charged it.
type Spawned struct {
	Invocation, Parent, Agent string
	Depth, Estimate, Charged  int64
	Calls                     int64
}

// Outcome is what a report does to an issue.
type Outcome struct {
	// Body is the issue body with the new checkpoint.
	Body string
	// Before and After bracket the report's budget.
	Before, After prune.Budget
	// Phase and Depth are the header's, after the report.
	Phase string
	Depth int64
	// Entry is the history entry appended.
	Entry checkpoint.NewEntry
	// Labels are the issue's labels after the report, sorted; Add and
	// Remove the changes still to make on the issue (labels already as
	// asked are left out).
	Labels      []string
	Add, Remove []string
	// Assignee is state.assignee after the report.
	Assignee string
	// Checkpoint is the new checkpoint as read back from Body.
	Checkpoint *checkpoint.Checkpoint
}

// ErrUnreadable: the checkpoint cannot be trusted; see `gns-guard recover`.
var ErrUnreadable = errors.New("the checkpoint cannot be read")

// UnreadableError carries the findings that make a checkpoint unreadable.
type UnreadableError struct{ Findings []finding.Finding }

func (e *UnreadableError) Error() string {
	if len(e.Findings) == 0 {
		return ErrUnreadable.Error() + ": the issue body has no checkpoint block"
	}
	return fmt.Sprintf("%v: %s", ErrUnreadable, e.Findings[0].Message)
}

func (e *UnreadableError) Unwrap() error { return ErrUnreadable }

// Options tune Apply: the guard's settings that shape the checkpoint.
type Options struct {
	// HistoryTail is the most entries history_tail holds (3).
	HistoryTail int
	// MaxBytes caps the checkpoint block (64 KiB).
	MaxBytes int
	// Hint is guard.HintAt (docs/ledger.md#the-read-hint); zero keeps the
	// body's.
	Hint time.Time
}

// maxEntryAction is in characters; the comment keeps the whole text.
const maxEntryAction = 200

// Apply computes the report r on an issue: its number, body and live
// labels. It returns an error wrapping ErrUnreadable when the checkpoint
// cannot be trusted.
func Apply(issue int64, body string, live []string, r Report, o Options) (*Outcome, error) {
	limit := max(o.HistoryTail, 1)
	parsed := checkpoint.Parse(body, checkpoint.Options{Issue: issue, MaxBytes: o.MaxBytes, TailLimit: limit})
	if !parsed.Valid() {
		return nil, unreadable(parsed.Findings)
	}
	cp := parsed.Checkpoint
	out, err := plan(cp, live, r)
	if err != nil {
		return nil, err
	}
	next := edit(cp, out, r)
	text, err := next.Encode()
	if err != nil {
		return nil, err
	}
	out.Body = checkpoint.RewriteHint(body, parsed.Block().Replace(text), o.Hint, o.MaxBytes)
	got, err := readBack(issue, out, r, tailLimit(limit, next))
	if err != nil {
		return nil, err
	}
	out.Checkpoint = got
	return out, nil
}

// unreadable is the error for a checkpoint that cannot be trusted: its
// error findings, but for an overlong history_tail (the guard archives
// it).
func unreadable(findings []finding.Finding) error {
	var errs []finding.Finding
	for _, f := range findings {
		if f.IsError() && f.Rule != checkpoint.RuleTailTooLong {
			errs = append(errs, f)
		}
	}
	return &UnreadableError{Findings: errs}
}

// plan is what report r does to checkpoint cp and the live labels, but
// for the body: the budget, phase, depth, history entry, labels and
// assignee after it.
func plan(cp *checkpoint.Checkpoint, live []string, r Report) (*Outcome, error) {
	out := &Outcome{
		Before: prune.Budget{Total: cp.Budget.Total.Value, Consumed: cp.Budget.Consumed.Value, Remaining: cp.Budget.Remaining.Value},
		Phase:  cp.Phase.Value,
		Depth:  cp.Depth.Value,
	}
	after, err := budgetAfter(out.Before, r.Consumed)
	if err != nil {
		return nil, err
	}
	out.After = after
	if r.Phase != "" {
		out.Phase = r.Phase
	}
	if r.Depth != nil {
		out.Depth = *r.Depth
	}
	out.Entry = checkpoint.NewEntry{
		Agent:      r.Agent,
		Action:     entryAction(r.Action),
		Invocation: r.Invocation,
		Timestamp:  r.Now.UTC().Format(time.RFC3339),
	}
	out.Labels, out.Add, out.Remove = labelsAfter(live, r.LabelsAdd, r.LabelsRemove)
	out.Assignee = cp.State.Assignee.Value
	switch {
	case r.Assignee != nil:
		out.Assignee = *r.Assignee
	case r.NextAgent != "" && cp.State.Assignee.Set:
		out.Assignee = r.NextAgent // the handoff
	}
	return out, nil
}

// OverflowError: a figure would pass math.MaxInt64, so nothing is written.
type OverflowError struct {
	// Field is e.g. budget.consumed; Base before, Add the report's.
	Field     string
	Base, Add int64
}

func (e *OverflowError) Error() string {
	return fmt.Sprintf("%s %d plus %d is past the largest whole number a checkpoint holds (%d)", e.Field, e.Base, e.Add, int64(math.MaxInt64))
}

// budgetAfter returns an *OverflowError rather than wrap around.
func budgetAfter(before prune.Budget, consumed int64) (prune.Budget, error) {
	sum, ok := add(before.Consumed, consumed)
	if !ok {
		return prune.Budget{}, &OverflowError{Field: "budget.consumed", Base: before.Consumed, Add: consumed}
	}
	rem, ok := add(before.Total, -sum)
	if !ok || sum == math.MinInt64 {
		return prune.Budget{}, &OverflowError{Field: "budget.remaining", Base: before.Total, Add: -sum}
	}
	return prune.Budget{Total: before.Total, Consumed: sum, Remaining: rem}, nil
}

// add is a+b, and false when it wraps around.
func add(a, b int64) (int64, bool) {
	s := a + b
	return s, (b >= 0) == (s >= a)
}

// edit applies r to cp; out is the plan.
func edit(cp *checkpoint.Checkpoint, out *Outcome, r Report) *checkpoint.Checkpoint {
	next := cp.WithBudget(out.After.Total, out.After.Consumed, out.After.Remaining).
		WithString("last_agent", r.Agent).
		WithString("last_invocation", r.Invocation).
		WithEntry(out.Entry).
		WithString("next_agent", r.NextAgent).
		WithInt("next_estimated_tokens", r.NextEstimate).
		WithLabels(out.Labels)
	if r.Phase != "" {
		next = next.WithString("phase", r.Phase)
	}
	depth := out.Depth
	if r.Depth != nil {
		next = next.WithInt("depth", depth)
	}
	if cp.AgentChain.Set && (r.Depth != nil || r.NextAgent != "") {
		next = next.WithAgentChain(chainFor(cp.AgentChain.Items, depth, r.Agent, r.NextAgent))
	}
	if out.Assignee != cp.State.Assignee.Value || r.Assignee != nil {
		next = next.WithAssignee(out.Assignee)
	}
	if r.CurrentTask != nil {
		next = next.WithString("current_task", *r.CurrentTask)
	}
	return next
}

// tailLimit is the history_tail the new checkpoint may hold: an
// overflowing one is left as it is, as the guard's run on this edit
// archives the oldest entries in its own signed archive chain
// (docs/contract.md §5), so nothing is dropped and every archive is the
// guard's.
func tailLimit(limit int, next *checkpoint.Checkpoint) int {
	if next.HistoryTail.Set {
		return max(limit, len(next.HistoryTail.Items))
	}
	return limit
}

// readBack checks out.Body holds the planned budget and invocation.
func readBack(issue int64, out *Outcome, r Report, tail int) (*checkpoint.Checkpoint, error) {
	back := checkpoint.Parse(out.Body, checkpoint.Options{Issue: issue, MaxBytes: len(out.Body) + 1, TailLimit: tail})
	if !back.Valid() {
		msg := "no checkpoint"
		if len(back.Findings) > 0 {
			msg = back.Findings[0].Message
		}
		return nil, fmt.Errorf("the new checkpoint does not read back (%s); nothing is written", msg)
	}
	got := back.Checkpoint
	if got.Budget.Consumed.Value != out.After.Consumed || got.Budget.Remaining.Value != out.After.Remaining ||
		got.LastInvocation.Value != r.Invocation || !HasInvocation(got, r.Invocation) {
		return nil, errors.New("the new checkpoint does not read back as planned; nothing is written")
	}
	return got, nil
}

// entryAction is the text's first line, at most maxEntryAction characters.
func entryAction(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if r := []rune(s); len(r) > maxEntryAction {
		s = string(r[:maxEntryAction-1]) + "…"
	}
	return s
}

// chainFor fits agent_chain to depth — cut to depth+1 entries, or grown
// with agent — and hands the level at depth to next, when there is one.
func chainFor(items []checkpoint.String, depth int64, agent, next string) []string {
	var chain []string
	for _, s := range items {
		chain = append(chain, s.Value)
	}
	n := max(int(depth), 0) + 1
	if len(chain) > n {
		chain = chain[:n]
	}
	for len(chain) < n {
		chain = append(chain, agent)
	}
	if next != "" {
		chain[n-1] = next
	}
	return chain
}

// labelsAfter returns the sorted result and the changes still needed.
func labelsAfter(live, add, remove []string) (after, toAdd, toRemove []string) {
	set := map[string]bool{}
	for _, l := range live {
		set[l] = true
	}
	for _, l := range remove {
		if set[l] {
			toRemove = append(toRemove, l)
		}
		delete(set, l)
	}
	for _, l := range add {
		if !set[l] && !slices.Contains(toAdd, l) {
			toAdd = append(toAdd, l)
		}
		set[l] = true
	}
	for l := range set {
		after = append(after, l)
	}
	slices.Sort(after)
	if after == nil {
		after = []string{}
	}
	return after, toAdd, toRemove
}

// HasInvocation checks last_invocation and the history entries.
func HasInvocation(cp *checkpoint.Checkpoint, invocation string) bool {
	if cp == nil || invocation == "" {
		return false
	}
	if cp.LastInvocation.Value == invocation {
		return true
	}
	for _, e := range cp.Entries() {
		if e.Invocation.Value == invocation {
			return true
		}
	}
	return false
}

// validName has no spaces or |: they separate the header's fields.
var validName = regexp.MustCompile(`^[^\s|]+$`)

// ValidName reports whether s can stand in the comment's header.
func ValidName(s string) bool { return validName.MatchString(s) }

// keyStatsJSON passes a JSON object, quotes other text; {} when empty.
func keyStatsJSON(s string) json.RawMessage {
	t := strings.TrimSpace(s)
	if t == "" {
		return json.RawMessage(`{}`)
	}
	if strings.HasPrefix(t, "{") {
		// Re-encoding escapes < and >, so the footer's HTML comment stays
		// closed.
		dec := json.NewDecoder(strings.NewReader(t))
		dec.UseNumber()
		var v map[string]any
		if dec.Decode(&v) == nil && !dec.More() {
			if data, err := json.Marshal(v); err == nil {
				return data
			}
		}
	}
	data, _ := json.Marshal(t) // a string always marshals
	return data
}
