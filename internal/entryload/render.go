package entryload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/gns-guard/gns-guard/internal/agentcomment"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// infoString is a path's extension when a short plain word.
func infoString(p string) string {
	ext := strings.TrimPrefix(path.Ext(p), ".")
	if ext == "" || len(ext) > 12 {
		return ""
	}
	for _, r := range ext {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return ""
		}
	}
	return strings.ToLower(ext)
}

func num64(n int64) string { return tokens.Format(int(n)) }

// capNote says where the cap came from.
func capNote(b LoadCap) string {
	size := ""
	if b.Size != "" {
		size = fmt.Sprintf("%s task: max context %s − checkpoint overhead %s", b.Size, tokens.Format(b.MaxContext), tokens.Format(b.Overhead))
	}
	switch {
	case b.Explicit && size != "":
		return "set by --cap; " + size
	case b.Explicit:
		return "set by --cap"
	}
	return size
}

// result is a result footer, as a conductor needs it.
type result struct {
	agent, status, verdict, files, stats, next string
	hasNext                                    bool
}

// parseResult reads an agent result comment: a 🔄 comment whose GNS_EVENT
// footer's event_type is subagent_result (as the completion digest
// counts them). ok is false for anything else.
func parseResult(body string) (r result, ok bool) {
	if !agentcomment.IsAgentComment(body) {
		return r, false
	}
	c, _ := agentcomment.Parse(body)
	f := c.Footer
	if f == nil || f.EventType != "subagent_result" {
		return r, false
	}
	r = result{agent: f.Agent, status: f.Status, verdict: f.Verdict, files: filesChanged(f), stats: f.KeyStatsText()}
	if r.agent == "" {
		r.agent = c.Agent
	}
	if f.NextAgent != nil {
		r.next, r.hasNext = *f.NextAgent, true
	}
	return r, true
}

// filesChanged lists up to ten paths and the count.
func filesChanged(f *agentcomment.Footer) string {
	var list []string
	if json.Unmarshal(bytes.TrimSpace(f.FilesChanged), &list) == nil && list != nil {
		shown := list
		if len(shown) > 10 {
			shown = shown[:10]
		}
		parts := make([]string, len(shown))
		for i, p := range shown {
			parts[i] = markdown.OneLine(p, 120)
		}
		s := strings.Join(parts, ", ")
		if len(list) > len(shown) {
			s += fmt.Sprintf(", … %d more", len(list)-len(shown))
		}
		return fmt.Sprintf("%d (%s)", len(list), s)
	}
	if len(bytes.TrimSpace(f.FilesChanged)) == 0 {
		return ""
	}
	return f.FilesChangedText()
}

// compressed renders a result by footer fields and a link.
func (r result) compressed(c Comment) string {
	field := func(v string, most int) string {
		if strings.TrimSpace(v) == "" {
			return "–"
		}
		return markdown.OneLine(v, most)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "agent: %s · status: %s · verdict: %s\n", field(r.agent, 60), field(r.status, 60), field(r.verdict, 60))
	fmt.Fprintf(&b, "files changed: %s\n", field(r.files, 1500))
	fmt.Fprintf(&b, "key stats: %s\n", field(r.stats, 400))
	next := field(r.next, 60)
	if r.hasNext && r.next == "" {
		next = "none (done)"
	}
	fmt.Fprintf(&b, "next agent: %s\n", next)
	fmt.Fprintf(&b, "full comment: %s\n", commentLink(c))
	return b.String()
}

// commentLink is the web address, else the id.
func commentLink(c Comment) string {
	u := strings.TrimSpace(c.URL)
	if (strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")) && !strings.ContainsAny(u, " \t\r\n") && len(u) < 2048 {
		return u
	}
	return fmt.Sprintf("comment %d (GET /repos/{owner}/{repo}/issues/comments/%d)", c.ID, c.ID)
}

// heading is a section's heading line.
func (s *Section) heading(status string, kept int) string {
	h := fmt.Sprintf("## P%d %s", s.Priority, s.Title)
	switch {
	case status == Cut:
		h += fmt.Sprintf(" (cut: first %s of %s lines, %s left out)", tokens.Format(kept), tokens.Format(s.Lines), tokens.Format(s.Lines-kept))
	case s.ToFit:
		h += " (compressed to fit the cap)"
	case s.Compressed:
		h += " (compressed)"
	}
	return h + "\n"
}

// render keeps a file's first kept lines (kept == s.Lines: whole).
func (s *Section) render(kept int) string {
	switch s.Kind {
	case KindFile:
		if kept < s.Lines {
			return s.heading(Cut, kept) + markdown.Fence(infoString(s.Source), strings.Join(s.lines[:kept], ""))
		}
		return s.heading(Kept, kept) + markdown.Fence(infoString(s.Source), s.body)
	case KindSkill:
		return s.heading(Kept, kept) + markdown.Fence(infoString(s.Source), s.body)
	case KindCheckpoint:
		return s.heading(Kept, kept) + markdown.Fence("yaml", s.body)
	case KindTask:
		return s.heading(Kept, kept) + markdown.Fence("markdown", s.body)
	}
	if s.Compressed {
		return s.heading(Kept, kept) + s.body
	}
	return s.heading(Kept, kept) + markdown.Fence("", s.body)
}

// footerLine is a section's footer line for a status.
func (s *Section) footerLine(status string, count, kept int) string {
	l := fmt.Sprintf("- P%d %s: ", s.Priority, s.Title)
	switch status {
	case Dropped:
		l += fmt.Sprintf("dropped, %s tokens do not fit", tokens.Format(s.Whole))
		if s.Kind == KindFile && s.Lines > 0 {
			l += " (not even its first line)"
		}
	case Cut:
		l += fmt.Sprintf("%s tokens, cut to its first %s of %s lines (%s left out)", tokens.Format(count), tokens.Format(kept),
			tokens.Format(s.Lines), tokens.Format(s.Lines-kept))
	default:
		l += tokens.Format(count) + " tokens"
		switch {
		case s.ToFit:
			l += fmt.Sprintf(", compressed from %s to fit the cap (--cap %d loads it whole; its link has it)", tokens.Format(s.Original), s.wholeCap)
		case s.Compressed:
			l += fmt.Sprintf(", compressed from %s (--full-comments loads it whole)", tokens.Format(s.Original))
		}
	}
	if s.Hidden != "" {
		l += "; hidden text Gitea does not show was removed: " + s.Hidden
	}
	return l + "\n"
}

// writeLeft names left-out comments one a line, at most MaxLeftNamed.
func writeLeft(b *strings.Builder, left []Left) {
	for i, l := range left {
		if i == MaxLeftNamed {
			fmt.Fprintf(b, "Not loaded: %d more comments left out for who wrote them.\n", len(left)-i)
			break
		}
		fmt.Fprintf(b, "Not loaded: comment %d by %s (%s): %s\n", l.ID, markdown.Quote(l.Author), l.Why, commentLink(Comment{ID: l.ID, URL: l.URL}))
	}
}

// header is the load's first line.
func header(in *Input) string {
	h := fmt.Sprintf("# Entry load of issue #%d", in.Issue)
	if in.Agent != "" {
		h += " for " + markdown.OneLine(in.Agent, 60)
	}
	return h + "\n"
}

// footer lists what each section took and what was left out.
func footer(in *Input, total int, lines []string) string {
	var b strings.Builder
	b.WriteString("---\n")
	fmt.Fprintf(&b, "Loaded %s of %s tokens (%s).\n", tokens.Format(total), tokens.Format(in.Budget.Cap), capNote(in.Budget))
	for _, l := range lines {
		b.WriteString(l)
	}
	if len(in.Skipped) > 0 {
		parts := make([]string, len(in.Skipped))
		for i, s := range in.Skipped {
			parts[i] = fmt.Sprintf("%d (%s)", s.ID, s.What)
		}
		fmt.Fprintf(&b, "Not loaded: the guard's own comments %s.\n", strings.Join(parts, ", "))
	}
	writeLeft(&b, in.Left)
	for _, g := range in.Gone {
		fmt.Fprintf(&b, "Missing: the result of agent %s in comment %d, which the guard accepted, %s: the guard fails the issue until "+
			"it is restored or an approver accepts it.\n", markdown.Quote(g.Agent), g.ID, g.What)
	}
	if g := in.Guard; g != nil {
		fmt.Fprintf(&b, "Guard's context-tokens: %s = this load without files or skill %s (its comments %s) + next_estimated_tokens %s "+
			"(%s task, max context %s).\n",
			num64(g.ContextTokens), tokens.Format(g.EntryTokens), tokens.Format(g.CommentTokens), num64(g.NextEstimated), g.TaskSize, num64(g.MaxContext))
	}
	return b.String()
}
