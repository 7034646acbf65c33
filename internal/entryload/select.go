package entryload

import (
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/agentcomment"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// SelectComments picks the newest n of recent that are not the guard's own
// and that authors lets load (docs/ledger.md#what-the-next-agent-reads). A
// comment is the guard's when guardUser wrote it with one of its markers; a
// marker elsewhere proves nothing. It returns the chosen, oldest first, and
// those passed over, newest first.
func SelectComments(recent []Comment, guardUser string, issue int64, n int, authors issues.Authors) (chosen []Comment,
	skipped []Skipped, left []Left) {
	for i := len(recent) - 1; i >= 0 && len(chosen) < n; i-- {
		c := recent[i]
		if what := guardComment(c, guardUser, issue); what != "" {
			skipped = append(skipped, Skipped{ID: c.ID, What: what})
			continue
		}
		if why := leftOut(c, authors); why != "" {
			left = append(left, Left{ID: c.ID, Author: c.Author, URL: c.URL, Why: why})
			continue
		}
		chosen = append(chosen, c)
	}
	for i, j := 0, len(chosen)-1; i < j; i, j = i+1, j-1 {
		chosen[i], chosen[j] = chosen[j], chosen[i]
	}
	return chosen, skipped, left
}

// leftOut says why c does not load, or "".
func leftOut(c Comment, authors issues.Authors) string {
	if !authors.Loads(c.Author) {
		return "its author cannot write the issue"
	}
	if !agentcomment.IsAgentComment(c.Body) {
		return ""
	}
	parsed, _ := agentcomment.Parse(c.Body)
	for _, agent := range []string{parsed.Agent, footerAgent(parsed)} {
		if agent != "" && !authors.Speaks(issues.Comment{ID: c.ID, Author: c.Author}, agent) {
			if authors.Mapped() {
				return fmt.Sprintf("it speaks as agent %s, which agents does not map to its author", markdown.Quote(agent))
			}
			return fmt.Sprintf("it speaks as agent %s, and its author cannot write the issue", markdown.Quote(agent))
		}
	}
	return ""
}

func footerAgent(c *agentcomment.Comment) string {
	if c.Footer == nil {
		return ""
	}
	return c.Footer.Agent
}

// guardComment says which of the guard's comments c is, or "".
func guardComment(c Comment, guardUser string, issue int64) string {
	if guardUser == "" || c.Author != guardUser {
		return ""
	}
	for _, m := range []struct{ what, marker string }{
		{"status", issues.StatusMarker(issue)},
		{"archive", issues.ArchiveMarkerPrefix(issue)},
		{"digest", issues.DigestMarker(issue)},
		{"recovery", issues.RecoveryMarker(issue)},
	} {
		if strings.Contains(c.Body, m.marker) {
			return m.what
		}
	}
	return ""
}
