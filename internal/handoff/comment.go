package handoff

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/agentcomment"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/receipt"
)

// EventResult is the footer's event_type of a report.
const EventResult = "subagent_result"

// Footer is the GNS_EVENT footer a report writes: every field docs/contract.md §5b
// lists, in its order, then three more that recovery reads (the history
// entry's action, the next estimate, the time).
type Footer struct {
	Agent        string          `json:"agent"`
	Invocation   string          `json:"invocation"`
	EventType    string          `json:"event_type"`
	Phase        string          `json:"phase"`
	Depth        int64           `json:"depth"`
	Budget       FooterBudget    `json:"budget"`
	Status       string          `json:"status"`
	Verdict      string          `json:"verdict"`
	FilesChanged int64           `json:"files_changed"`
	KeyStats     json.RawMessage `json:"key_stats"`
	NextAgent    string          `json:"next_agent"`
	NextEstimate int64           `json:"next_estimated_tokens"`
	Action       string          `json:"action"`
	Timestamp    string          `json:"timestamp"`
	// Metered is the meter's receipt, when configured
	// (docs/meter.md#receipts).
	Metered *receipt.Receipt `json:"metered,omitempty"`
}

// FooterBudget is remaining before, consumed, and remaining after.
type FooterBudget struct {
	Before    int64 `json:"before"`
	Consumed  int64 `json:"consumed"`
	Remaining int64 `json:"remaining"`
}

// FooterOf is the footer of report r with outcome o.
func FooterOf(r Report, o *Outcome) Footer {
	verdict := r.Verdict
	if verdict == "" {
		verdict = r.Status
	}
	return Footer{
		Agent: r.Agent, Invocation: r.Invocation, EventType: EventResult,
		Phase: o.Phase, Depth: o.Depth,
		Budget:       FooterBudget{Before: o.Before.Remaining, Consumed: r.Consumed, Remaining: o.After.Remaining},
		Status:       r.Status,
		Verdict:      verdict,
		FilesChanged: r.FilesChanged,
		KeyStats:     keyStatsJSON(r.KeyStats),
		NextAgent:    r.NextAgent,
		NextEstimate: r.NextEstimate,
		Action:       o.Entry.Action,
		Timestamp:    o.Entry.Timestamp,
		Metered:      r.Receipt,
	}
}

// Comment renders the result comment of report r with outcome o: the
// protocol's header and sections, and the GNS_EVENT footer at its very end.
// The agent's own text is shown as written, but can neither open an HTML
// comment (which would hide the rest, or fake a footer) nor close the
// result's fence.
func Comment(r Report, o *Outcome) string {
	f := FooterOf(r, o)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s | phase:%s | depth:%d\n\n", agentcomment.Marker, r.Agent, o.Phase, o.Depth)
	fmt.Fprintf(&b, "**Event Type**: %s\n", EventResult)
	fmt.Fprintf(&b, "**Invocation**: %s\n", markdown.Cell(r.Invocation, 200))
	fmt.Fprintf(&b, "**Budget**: %d → %d → %d\n", f.Budget.Before, f.Budget.Consumed, f.Budget.Remaining)
	fmt.Fprintf(&b, "**Status**: %s · **Verdict**: %s · **Files changed**: %d\n", markdown.Cell(f.Status, 40),
		markdown.Cell(f.Verdict, 200), f.FilesChanged)
	if strings.TrimSpace(r.KeyStats) != "" {
		fmt.Fprintf(&b, "**Key stats**: %s\n", markdown.Cell(r.KeyStats, 500))
	}
	if rc := r.Receipt; rc != nil {
		worst := ""
		if rc.WorstCase > 0 {
			worst = fmt.Sprintf("; %d of them the worst case of calls whose usage it could not read", rc.WorstCase)
		}
		fmt.Fprintf(&b, "**Metered**: %d tokens in %d calls (the meter's signed receipt%s)\n", rc.Tokens, rc.Calls, worst)
	}
	b.WriteString("\n### Action Taken\n")
	b.WriteString(safeText(r.Action))
	b.WriteString("\n")
	if strings.TrimSpace(r.Result) != "" {
		b.WriteString("\n### Result\n")
		b.WriteString(fenced(r.Result))
	}
	b.WriteString("\n### Next Decision\n")
	if r.NextAgent == "" {
		b.WriteString("**Recommended next**: none (the workflow is done)\n")
	} else {
		fmt.Fprintf(&b, "**Recommended next**: `%s`\n", strings.ReplaceAll(r.NextAgent, "`", ""))
	}
	fmt.Fprintf(&b, "**Estimated tokens**: %d\n", r.NextEstimate)
	fmt.Fprintf(&b, "**Budget remaining**: %d of %d\n", o.After.Remaining, o.After.Total)
	b.WriteString("\n### State Changes\n")
	fmt.Fprintf(&b, "- Labels add: %s\n", list(r.LabelsAdd))
	fmt.Fprintf(&b, "- Labels remove: %s\n", list(r.LabelsRemove))
	switch {
	case r.Assignee != nil:
		fmt.Fprintf(&b, "- Assignee: %s\n", markdown.Cell(*r.Assignee, 100))
	case r.NextAgent != "" && o.Assignee == r.NextAgent:
		fmt.Fprintf(&b, "- Assignee: %s (the next agent)\n", markdown.Cell(o.Assignee, 100))
	default:
		fmt.Fprintf(&b, "- Assignee: %s (unchanged)\n", markdown.Cell(o.Assignee, 100))
	}
	if r.CurrentTask != nil {
		fmt.Fprintf(&b, "- Current task: %s\n", markdown.Cell(*r.CurrentTask, 300))
	}
	if r.Phase != "" || r.Depth != nil {
		fmt.Fprintf(&b, "- Checkpoint: phase %s, depth %d\n", markdown.Cell(o.Phase, 100), o.Depth)
	}
	b.WriteString("\n---\n")
	data, err := json.Marshal(f) // escapes < and >: the comment cannot be closed early
	if err != nil {
		panic(err) // plain strings, integers and a valid JSON value always marshal
	}
	fmt.Fprintf(&b, "<!-- GNS_EVENT %s -->\n", data)
	return b.String()
}

func list(ls []string) string {
	if len(ls) == 0 {
		return "none"
	}
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = markdown.Cell(l, 100)
	}
	return strings.Join(out, ", ")
}

// safeText keeps an agent's Markdown but neutralizes HTML comments, so
// nothing it writes can hide the rest of the comment or pass for a footer
// or a hidden marker.
func safeText(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "–"
	}
	return strings.NewReplacer("<!--", "&lt;!--", "-->", "--&gt;").Replace(s)
}

// fenced puts text in a code block whose fence is longer than any backtick
// run inside: json when the text is JSON, else text.
func fenced(s string) string {
	s = strings.TrimRight(s, "\r\n")
	lang := "text"
	if json.Valid([]byte(s)) {
		lang = "json"
	}
	return markdown.Fence(lang, s)
}

// ParseFooter reads a report's footer from a comment through agentcomment,
// the one reader of GNS_EVENT footers, in the shape recovery uses. ok is
// false when the comment is not an agent comment or its footer cannot be
// read.
func ParseFooter(body string) (Footer, bool) {
	if !agentcomment.IsAgentComment(body) {
		return Footer{}, false
	}
	c, _ := agentcomment.Parse(body)
	if c == nil || c.Footer == nil {
		return Footer{}, false
	}
	af := c.Footer
	f := Footer{
		Agent: af.Agent, Invocation: af.Invocation, EventType: af.EventType, Phase: af.Phase,
		Status: af.Status, Verdict: af.Verdict, KeyStats: af.KeyStats,
		Action: af.Action, Timestamp: af.Timestamp,
	}
	if af.Depth != nil {
		f.Depth = *af.Depth
	}
	if b := af.Budget; b != nil && b.Before != nil && b.Consumed != nil && b.Remaining != nil {
		f.Budget = FooterBudget{*b.Before, *b.Consumed, *b.Remaining}
	} else {
		return Footer{}, false
	}
	if af.NextAgent != nil {
		f.NextAgent = *af.NextAgent
	}
	if af.NextEstimate != nil {
		f.NextEstimate = *af.NextEstimate
	}
	var n int64
	if json.Unmarshal(af.FilesChanged, &n) == nil {
		f.FilesChanged = n
	}
	return f, true
}
