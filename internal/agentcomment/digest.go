package agentcomment

import (
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/markdown"
)

// DigestHeading starts every completion digest.
const DigestHeading = "## GNS-2 Completion Digest"

// Result is a digest row.
type Result struct {
	CommentID    int64
	URL          string
	Agent        string
	Status       string
	Verdict      string
	FilesChanged string
	KeyStats     string
}

// ResultOf accepts only well-formed comments whose event_type is
// subagent_result.
func ResultOf(id int64, url, body string) (Result, bool) {
	if !IsAgentComment(body) {
		return Result{}, false
	}
	c, probs := Parse(body)
	if c.Footer == nil || c.Footer.EventType != "subagent_result" {
		return Result{}, false
	}
	_ = probs // a digest lists results even when their comments have protocol problems
	return Result{
		CommentID:    id,
		URL:          url,
		Agent:        c.Footer.Agent,
		Status:       c.Footer.Status,
		Verdict:      c.Footer.Verdict,
		FilesChanged: c.Footer.FilesChangedText(),
		KeyStats:     c.Footer.KeyStatsText(),
	}, true
}

// Digest renders a completion digest: a heading, a count and a row per
// result linking to its full comment. Nothing else: the full comments stay
// where they are.
func Digest(issue int64, results []Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n%d agent results on issue #%d since the last digest. The full comments are linked; nothing was "+
		"removed.\n\n", DigestHeading, len(results), issue)
	b.WriteString("| # | agent | status | verdict | files | key stats | result |\n|---|---|---|---|---|---|---|\n")
	for i, r := range results {
		link := fmt.Sprintf("#issuecomment-%d", r.CommentID)
		if strings.HasPrefix(r.URL, "http://") || strings.HasPrefix(r.URL, "https://") {
			link = r.URL
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | [comment](%s) |\n", i+1,
			markdown.Cell(r.Agent, 40), markdown.Cell(r.Status, 24), markdown.Cell(r.Verdict, 24), markdown.Cell(r.FilesChanged, 12),
			markdown.Cell(r.KeyStats, 80), markdown.URL(link))
	}
	return b.String()
}
