package agentcomment

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gns-guard/gns-guard/internal/markdown"
)

// Marker starts every agent comment.
const Marker = "## 🔄"

// RecoveryHeading heads a context-recovery request, not a result.
const RecoveryHeading = "## 🔄 context-recovery-needed"

// EventTypes are the accepted values of the footer's event_type.
var EventTypes = []string{"subagent_result", "state_change", "budget_update", "security_alert", "checkpoint"}

// Comment is a parsed agent comment.
type Comment struct {
	Agent  string
	Phase  string
	Depth  int64
	Footer *Footer
}

// Footer is the GNS_EVENT JSON, the one type that reads and writes it
// (handoff.FooterOf writes it). A nil pointer is a field not given.
type Footer struct {
	Agent        string          `json:"agent"`
	Invocation   string          `json:"invocation"`
	EventType    string          `json:"event_type"`
	Phase        string          `json:"phase"`
	Depth        *int64          `json:"depth"`
	Budget       *Spend          `json:"budget"`
	Status       string          `json:"status,omitempty"`
	Verdict      string          `json:"verdict,omitempty"`
	FilesChanged json.RawMessage `json:"files_changed,omitempty"`
	KeyStats     json.RawMessage `json:"key_stats,omitempty"`
	NextAgent    *string         `json:"next_agent,omitempty"`
	// NextEstimate, Action and Timestamp feed recovery (package handoff).
	NextEstimate *int64 `json:"next_estimated_tokens,omitempty"`
	Action       string `json:"action,omitempty"`
	Timestamp    string `json:"timestamp,omitempty"`
	// Metered is report's receipt (package receipt reads it).
	Metered json.RawMessage `json:"metered,omitempty"`
}

// Spend is the footer's budget: the tokens remaining before the
// invocation, those it consumed, and those remaining after.
type Spend struct {
	Before    *int64 `json:"before"`
	Consumed  *int64 `json:"consumed"`
	Remaining *int64 `json:"remaining"`
}

// Problem is a protocol error at a line and column.
type Problem struct {
	Line, Col int
	Message   string
}

// IsAgentComment: a 🔄 heading, not a context-recovery request.
func IsAgentComment(body string) bool {
	t := strings.TrimLeft(body, " \t\r\n")
	return strings.HasPrefix(t, Marker) && !strings.HasPrefix(t, RecoveryHeading)
}

var (
	headerRe = regexp.MustCompile(`^## 🔄 (\S+) \| phase:(\S+) \| depth:(\d+)\s*$`)
	footerRe = regexp.MustCompile(`(?s)<!--\s*GNS_EVENT\s+(.*?)\s*-->\s*$`)
)

// Parse returns every protocol problem.
func Parse(body string) (*Comment, []Problem) {
	p := &parser{body: body}
	c := &Comment{}
	header := p.header(c)
	f, line, col := p.footer()
	if f == nil {
		return c, p.probs
	}
	c.Footer = f
	p.fields(f, line, col)
	if header {
		p.matchHeader(c, f, line, col)
	}
	return c, p.probs
}

// parser collects the problems of one comment.
type parser struct {
	body  string
	probs []Problem
}

func (p *parser) add(line, col int, format string, args ...any) {
	p.probs = append(p.probs, Problem{line, col, fmt.Sprintf(format, args...)})
}

// header fills agent, phase and depth; false when unmatched.
func (p *parser) header(c *Comment) bool {
	lead := len(p.body) - len(strings.TrimLeft(p.body, " \t\r\n"))
	firstLine := 1 + strings.Count(p.body[:lead], "\n")
	header, _, _ := strings.Cut(p.body[lead:], "\n")
	header = strings.TrimRight(header, "\r")
	m := headerRe.FindStringSubmatch(header)
	if m == nil {
		p.add(firstLine, 1, "the header %s does not match `## 🔄 {agent} | phase:{phase} | depth:{depth}` (one space around each |, no "+
			"spaces inside values, depth a whole number)", markdown.Quote(header))
		return false
	}
	c.Agent, c.Phase = m[1], m[2]
	d, err := strconv.ParseInt(m[3], 10, 64)
	if err != nil {
		p.add(firstLine, strings.Index(header, "depth:")+7, "depth %s is not a whole number", markdown.Quote(m[3]))
	}
	c.Depth = d
	return true
}

// footer is nil when missing or not JSON; it returns where JSON starts.
func (p *parser) footer() (f *Footer, line, col int) {
	body := p.body
	loc := footerRe.FindStringSubmatchIndex(body)
	if loc == nil {
		if i := strings.LastIndex(body, "GNS_EVENT"); i >= 0 {
			l, col := lineCol(body, i)
			p.add(l, col, "the GNS_EVENT footer is not a closed HTML comment at the very end of the comment: expected <!-- GNS_EVENT {json} -->")
		} else {
			last := 1 + strings.Count(strings.TrimRight(body, " \t\r\n"), "\n")
			p.add(last, 1, "the machine-readable footer is missing: end the comment with <!-- GNS_EVENT {json} --> (agent, invocation, "+
				"event_type, phase, depth, budget)")
		}
		return nil, 0, 0
	}
	line, col = lineCol(body, loc[2])
	f = new(Footer)
	if err := json.NewDecoder(strings.NewReader(body[loc[2]:loc[3]])).Decode(f); err != nil {
		l, c := line, col
		var se *json.SyntaxError
		if errors.As(err, &se) {
			l, c = lineCol(body, loc[2]+int(se.Offset)-1)
		}
		p.add(l, c, "the GNS_EVENT footer is not valid JSON: %v", err)
		return nil, 0, 0
	}
	return f, line, col
}

// fields checks required fields (more for subagent_result), at the footer's
// position.
func (p *parser) fields(f *Footer, line, col int) {
	need := func(ok bool, key, want string) {
		if !ok {
			p.add(line, col, "GNS_EVENT.%s: %s", key, want)
		}
	}
	need(f.Agent != "", "agent", "required, the agent's name")
	need(f.Invocation != "", "invocation", "required, the invocation id")
	need(slices.Contains(EventTypes, f.EventType), "event_type", "must be one of "+strings.Join(EventTypes, ", ")+", found "+markdown.Quote(f.EventType))
	need(f.Phase != "", "phase", "required, the workflow phase")
	need(f.Depth != nil, "depth", "required, a whole number")
	need(f.Budget != nil && f.Budget.Before != nil && f.Budget.Consumed != nil && f.Budget.Remaining != nil, "budget",
		"required: {before, consumed, remaining}, whole numbers")
	if f.EventType == "subagent_result" {
		need(f.Status != "", "status", "required for a subagent_result")
		need(f.Verdict != "", "verdict", "required for a subagent_result")
		need(len(f.FilesChanged) > 0 && string(f.FilesChanged) != "null", "files_changed", "required for a subagent_result (a count or a list of paths)")
		need(len(f.KeyStats) > 0 && string(f.KeyStats) != "null", "key_stats", "required for a subagent_result")
		need(f.NextAgent != nil, "next_agent", "required for a subagent_result (\"\" when done)")
	}
}

// matchHeader checks the footer's agent, phase and depth.
func (p *parser) matchHeader(c *Comment, f *Footer, line, col int) {
	if f.Agent != "" && f.Agent != c.Agent {
		p.add(line, col, "GNS_EVENT.agent %s differs from the header's agent %s", markdown.Quote(f.Agent), markdown.Quote(c.Agent))
	}
	if f.Phase != "" && f.Phase != c.Phase {
		p.add(line, col, "GNS_EVENT.phase %s differs from the header's phase %s", markdown.Quote(f.Phase), markdown.Quote(c.Phase))
	}
	if f.Depth != nil && *f.Depth != c.Depth {
		p.add(line, col, "GNS_EVENT.depth %d differs from the header's depth %d", *f.Depth, c.Depth)
	}
}

// lineCol is 1-based; columns count characters.
func lineCol(s string, off int) (int, int) {
	off = max(0, min(off, len(s)))
	line := 1 + strings.Count(s[:off], "\n")
	start := strings.LastIndex(s[:off], "\n") + 1
	return line, 1 + utf8.RuneCountInString(s[start:off])
}

// FilesChangedText is a count, or the number of paths.
func (f *Footer) FilesChangedText() string {
	raw := bytes.TrimSpace(f.FilesChanged)
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strconv.Itoa(len(list))
	}
	return compact(raw)
}

// KeyStatsText renders an object as "k=v, k=v".
func (f *Footer) KeyStatsText() string {
	raw := bytes.TrimSpace(f.KeyStats)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + strings.Trim(compact(obj[k]), `"`)
		}
		return strings.Join(parts, ", ")
	}
	return compact(raw)
}

func compact(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
