package handoff

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/gns-guard/gns-guard/internal/agentcomment"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// EventResult is the footer's event_type of a report.
const EventResult = "subagent_result"

// FooterOf is the footer of report r with outcome o: every field
// docs/contract.md §5b lists, then what recovery reads (the history
// entry's action, the next estimate, the time) and the meter's receipt.
func FooterOf(r Report, o *Outcome) agentcomment.Footer {
	verdict := r.Verdict
	if verdict == "" {
		verdict = r.Status
	}
	f := agentcomment.Footer{
		Agent: r.Agent, Invocation: r.Invocation, EventType: EventResult,
		Phase: o.Phase, Depth: &o.Depth,
		Budget:       &agentcomment.Spend{Before: &o.Before.Remaining, Consumed: &r.Consumed, Remaining: &o.After.Remaining},
		Status:       r.Status,
		Verdict:      verdict,
		FilesChanged: json.RawMessage(strconv.FormatInt(r.FilesChanged, 10)),
		KeyStats:     keyStatsJSON(r.KeyStats),
		NextAgent:    &r.NextAgent,
		NextEstimate: &r.NextEstimate,
		Action:       o.Entry.Action,
		Timestamp:    o.Entry.Timestamp,
	}
	if r.Receipt != nil {
		data, err := json.Marshal(r.Receipt)
		if err != nil {
			panic(err) // strings and integers always marshal
		}
		f.Metered = data
	}
	return f
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
	if r.Speaker != "" {
		fmt.Fprintf(&b, "**Written by**: `%s`, through the gate (the meter signed its word)\n", strings.ReplaceAll(r.Speaker, "`", ""))
	}
	fmt.Fprintf(&b, "**Event Type**: %s\n", EventResult)
	fmt.Fprintf(&b, "**Invocation**: %s\n", markdown.Cell(r.Invocation, 200))
	fmt.Fprintf(&b, "**Budget**: %d → %d → %d\n", o.Before.Remaining, r.Consumed, o.After.Remaining)
	fmt.Fprintf(&b, "**Status**: %s · **Verdict**: %s · **Files changed**: %d\n", markdown.Cell(f.Status, 40),
		markdown.Cell(f.Verdict, 200), r.FilesChanged)
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
	cascadeLog(&b, r.Cascade)
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

// ParseFooter reads a report's footer through agentcomment, the one
// reader of GNS_EVENT footers. ok is false unless the comment is an agent
// comment whose footer holds the whole budget; depth, next_agent and
// next_estimated_tokens it lacks read as zero.
func ParseFooter(body string) (agentcomment.Footer, bool) {
	if !agentcomment.IsAgentComment(body) {
		return agentcomment.Footer{}, false
	}
	c, _ := agentcomment.Parse(body)
	if c == nil || c.Footer == nil {
		return agentcomment.Footer{}, false
	}
	f := *c.Footer
	if b := f.Budget; b == nil || b.Before == nil || b.Consumed == nil || b.Remaining == nil {
		return agentcomment.Footer{}, false
	}
	f.Depth = orZero(f.Depth)
	f.NextAgent = orZero(f.NextAgent)
	f.NextEstimate = orZero(f.NextEstimate)
	return f, true
}

// orZero is p, or a pointer to the zero value.
func orZero[T any](p *T) *T {
	if p == nil {
		return new(T)
	}
	return p
}

// cascadeLog writes the sub-agents the gate opened (seed protocol: "Log
// Cascade"): the gate's record, not the agent's word.
func cascadeLog(b *strings.Builder, spawned []Spawned) {
	if len(spawned) == 0 {
		return
	}
	b.WriteString("\n### Cascade Log\n")
	b.WriteString("| invocation | parent | agent | depth | estimate | metered |\n|---|---|---|---|---|---|\n")
	for _, s := range spawned {
		fmt.Fprintf(b, "| %s | %s | %s | %d | %d | %d tokens in %d calls |\n", markdown.Cell(s.Invocation, 80), markdown.Cell(s.Parent, 80),
			markdown.Cell(s.Agent, 80), s.Depth, s.Estimate, s.Charged, s.Calls)
	}
}
