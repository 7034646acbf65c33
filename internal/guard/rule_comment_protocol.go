package guard

import (
	"fmt"
	"slices"

	"github.com/gns-guard/gns-guard/internal/agentcomment"
	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// checkCommentProtocol validates the agent result comment that triggered an
// issue_comment event: its header and GNS_EVENT footer, its depth against
// the cascade limit, its phase against the checkpoint that records it, and
// its agent against allowed-agents. Positions are lines and columns of the comment.
// An outsider's comment is outside the judged conversation: its problems
// are warnings, with no label (docs/ledger.md#what-the-next-agent-reads).
func checkCommentProtocol(e *decision) (out []Violation) {
	c := e.eventComment()
	if c == nil || !agentcomment.IsAgentComment(c.Body) {
		return nil
	}
	if e.outsider(*c) {
		defer func() { out = asOutsiders(out, c.Author) }()
	}
	parsed, probs := agentcomment.Parse(c.Body)
	path := fmt.Sprintf("comment#%d", c.ID)
	add := func(line, col int, format string, args ...any) {
		out = append(out, at(checkpoint.Pos{Line: line, Col: col}, path, "comment #%d: "+format, append([]any{c.ID}, args...)...))
	}
	for _, p := range probs {
		add(p.Line, p.Col, "%s", p.Message)
	}
	defer func() {
		if len(out) > 0 && c.HTMLURL != "" {
			if e.plan.Links == nil {
				e.plan.Links = map[string]string{}
			}
			e.plan.Links[path] = c.HTMLURL
		}
	}()
	if parsed.Agent == "" {
		return out
	}
	if limit, ok := e.maxDepth(); ok && limit != config.Unlimited && parsed.Depth > int64(limit) {
		add(1, 1, "reports depth %d, over the cascade limit of %d", parsed.Depth, limit)
	}
	if e.cp != nil && parsed.Phase != e.cp.Phase.Value && recorded(parsed, e.cp) {
		add(1, 1, "reports phase %s but the checkpoint is in phase %s", markdown.Quote(parsed.Phase), markdown.Quote(e.cp.Phase.Value))
	}
	if len(e.cfg.AllowedAgents) > 0 && !slices.Contains(e.cfg.AllowedAgents, parsed.Agent) {
		v := e.agentViolation(checkpoint.Pos{Line: 1, Col: 1}, path, parsed.Agent)
		v.Message = fmt.Sprintf("comment #%d: %s", c.ID, v.Message)
		out = append(out, v)
	}
	return out
}

// recorded says the checkpoint records the result c: its footer names the last
// invocation. A report that moves to a new phase posts its result before
// patching the body, so the result is judged once the checkpoint names it.
func recorded(c *agentcomment.Comment, cp *checkpoint.Checkpoint) bool {
	return c.Footer != nil && c.Footer.Invocation != "" && c.Footer.Invocation == cp.LastInvocation.Value
}

// eventComment is read live when recent, else the payload's copy.
func (e *decision) eventComment() *issues.Comment {
	ev := e.in.Event
	if ev.Name != "issue_comment" || ev.Comment == nil {
		return nil
	}
	for i := range e.in.Recent {
		if e.in.Recent[i].ID == ev.Comment.ID {
			return &e.in.Recent[i]
		}
	}
	return ev.Comment
}

// asOutsiders turns findings about an outsider's comment into warnings
// with no label and no lock: its author cannot write the issue, so the
// comment is left out of the entry load and counts for nothing.
func asOutsiders(vs []Violation, author string) []Violation {
	for i := range vs {
		vs[i].Severity = finding.Warning
		vs[i].Label, vs[i].Lock = "", false
		vs[i].Message += fmt.Sprintf(" (posted by %s, who cannot write the issue: the comment is left out of the next agent's load and "+
			"counts for nothing)", markdown.Quote(author))
	}
	return vs
}
