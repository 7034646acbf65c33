package handoff

import (
	"fmt"
	"slices"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
)

// Sources of fields from neither baseline nor footer.
const (
	fromBody   = "the broken body"
	fromLabels = "the issue's live labels"
)

// pick is a value, its source, and what to check ("" for nothing).
type pick[T any] struct {
	Value  T
	Source string
	Note   string
}

// footerSrc names e's footer and the key read.
func footerSrc(e Event, key string) string {
	return fmt.Sprintf("the footer of comment %d (%s, %s): %s", e.CommentID, e.Footer.Agent, e.Footer.Invocation, key)
}

// phaseOf is the newest footer's since the baseline, else the baseline's.
func phaseOf(b Baseline, lastSince *Event) pick[string] {
	if lastSince != nil {
		return pick[string]{Value: lastSince.Footer.Phase, Source: footerSrc(*lastSince, "phase")}
	}
	return pick[string]{Value: b.Phase, Source: b.Source}
}

// depthOf is the depth of the newest footer, else the body's when it is
// readable and not negative, else 0 with a note.
func depthOf(last *Event, br *checkpoint.Checkpoint) pick[int64] {
	if last != nil {
		return pick[int64]{Value: *last.Footer.Depth, Source: footerSrc(*last, "depth")}
	}
	if br.Depth.Set && br.Depth.Value >= 0 {
		return pick[int64]{Value: br.Depth.Value, Source: fromBody + " (no agent comment says otherwise)"}
	}
	return pick[int64]{Source: "not recoverable: no agent comment and no readable depth in the body; check it",
		Note: "depth could not be recovered: 0 is a guess"}
}

// lastAgentOf is last_agent and last_invocation: the newest footer's, else
// the body's when both are readable, else placeholders with a note (on the
// agent).
func lastAgentOf(last *Event, br *checkpoint.Checkpoint) (agent, invocation pick[string]) {
	if last != nil {
		return pick[string]{Value: last.Footer.Agent, Source: footerSrc(*last, "agent")},
			pick[string]{Value: last.Footer.Invocation, Source: footerSrc(*last, "invocation")}
	}
	la, li := br.LastAgent, br.LastInvocation
	if !la.Set || la.Value == "" || !li.Set || li.Value == "" {
		return pick[string]{Value: "recovery", Source: fromBody, Note: "last_agent and last_invocation could not be recovered: placeholders written"},
			pick[string]{Value: "recovered", Source: fromBody}
	}
	return pick[string]{Value: la.Value, Source: fromBody}, pick[string]{Value: li.Value, Source: fromBody}
}

// liveLabels are the labels, sorted, each once.
func liveLabels(labels []string) []string {
	out := slices.Clone(labels)
	slices.Sort(out)
	return slices.Compact(out)
}

// assigneeOf: readable state.assignee, else newest next_agent, else empty.
func assigneeOf(br *checkpoint.Checkpoint, last *Event) pick[string] {
	switch {
	case br.State.Assignee.Set:
		return pick[string]{Value: br.State.Assignee.Value, Source: fromBody}
	case last != nil:
		return pick[string]{Value: *last.Footer.NextAgent, Source: footerSrc(*last, "next_agent")}
	}
	return pick[string]{Source: "not recoverable: empty"}
}

// currentTaskOf is not ok when unreadable or empty: the key is left out.
func currentTaskOf(br *checkpoint.Checkpoint) (t pick[string], ok bool) {
	if !br.CurrentTask.Set || br.CurrentTask.Value == "" {
		return pick[string]{}, false
	}
	return pick[string]{Value: br.CurrentTask.Value, Source: fromBody}, true
}

// agentChainOf is ok only when its length fits depth.
func agentChainOf(br *checkpoint.Checkpoint, depth int64) (chain pick[[]string], ok bool) {
	if !br.AgentChain.Set || int64(len(br.AgentChain.Items)) != depth+1 {
		return pick[[]string]{}, false
	}
	names := make([]string, len(br.AgentChain.Items))
	for i, a := range br.AgentChain.Items {
		names[i] = a.Value
	}
	return pick[[]string]{Value: names, Source: fromBody + " (its length fits depth)"}, true
}

// nextAgentOf: newest footer's, else the body's, else empty.
func nextAgentOf(last *Event, br *checkpoint.Checkpoint) pick[string] {
	if last != nil {
		return pick[string]{Value: *last.Footer.NextAgent, Source: footerSrc(*last, "next_agent")}
	}
	return pick[string]{Value: br.NextAgent.Value, Source: fromBody}
}

// nextEstimateOf: newest footer's, else the body's; 0 when unreadable or
// negative.
func nextEstimateOf(last *Event, br *checkpoint.Checkpoint) pick[int64] {
	if last != nil {
		return pick[int64]{Value: *last.Footer.NextEstimate, Source: footerSrc(*last, "next_estimated_tokens")}
	}
	return pick[int64]{Value: max(br.NextEstimatedTokens.Value, 0), Source: fromBody}
}

// createdAtOf: the body's if RFC 3339, else the guard's first record time.
func createdAtOf(br *checkpoint.Checkpoint, created time.Time) pick[string] {
	if c := br.CreatedAt; c.Set && isTimestamp(c.Value) {
		return pick[string]{Value: c.Value, Source: fromBody}
	}
	return pick[string]{Value: rfc3339(created), Source: "not recoverable: the time of the guard's first record on the issue"}
}

// isTimestamp reports whether s is an RFC 3339 time.
func isTimestamp(s string) bool {
	_, err := time.Parse(time.RFC3339, s)
	return err == nil
}

// rfc3339 writes UTC, as checkpoints do.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }
