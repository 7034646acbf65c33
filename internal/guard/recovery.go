package guard

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/gns-guard/gns-guard/internal/agentcomment"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// planRecovery posts, once, the problems and commands that rebuild an
// unreadable checkpoint.
func (e *decision) planRecovery() {
	marker := issues.RecoveryMarker(e.in.Issue.Number)
	for _, c := range e.in.Recent {
		if e.own(c, marker) {
			return
		}
	}
	var b strings.Builder
	b.WriteString(agentcomment.RecoveryHeading + "\n\n")
	b.WriteString("The checkpoint in this issue's body cannot be trusted, so no agent should resume from it. ")
	b.WriteString("The orchestrator (or a person) must rebuild it from the last valid checkpoint, the archive comments and the " +
		"agents' GNS_EVENT footers, then fix the body.\n\n")
	b.WriteString("| where | problem |\n|---|---|\n")
	rows := 0
	for _, v := range e.plan.Violations {
		switch v.Rule {
		case "checkpoint-invalid", "checkpoint-ambiguous", "checkpoint-missing", "checkpoint-too-large":
			if rows++; rows <= MaxTableRows {
				fmt.Fprintf(&b, "| %d:%d | %s |\n", v.Line, v.Col, markdown.Cell(v.Message, 600))
			}
		}
	}
	if rows > MaxTableRows {
		fmt.Fprintf(&b, "| | … and %d more: `gns-guard check` on the body lists them |\n", rows-MaxTableRows)
	}
	fmt.Fprintf(&b, "\n`gns-guard recover --repo %s --issue %d` proposes a checkpoint rebuilt from the guard's ledger and the "+
		"agents' GNS_EVENT footers, saying where every field came from; with `--apply` a budget admin (or a repository admin) writes "+
		"it. ", e.repo(), e.in.Issue.Number)
	b.WriteString("`gns-guard history` rebuilds the full history; `gns-guard check` validates a fixed body before it is saved.\n\n")
	b.WriteString(marker + "\n")
	e.plan.Recovery = b.String()
}

// repo is the shell's, else a recent comment's link.
func (e *decision) repo() string {
	if repoName.MatchString(e.in.Repo) {
		return e.in.Repo
	}
	return repoOf(e.in.Recent, e.in.Issue.Number)
}

// repoOf reads a comment's server address, else says OWNER/NAME.
func repoOf(cs []issues.Comment, issue int64) string {
	suffix := fmt.Sprintf("/issues/%d", issue)
	for _, c := range cs {
		u, _, _ := strings.Cut(c.HTMLURL, "#")
		p, ok := strings.CutSuffix(u, suffix)
		if !ok {
			continue
		}
		parts := strings.Split(p, "/")
		if len(parts) < 2 {
			continue
		}
		repo := parts[len(parts)-2] + "/" + parts[len(parts)-1]
		if repoName.MatchString(repo) {
			return repo
		}
	}
	return "OWNER/NAME"
}

var repoName = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
