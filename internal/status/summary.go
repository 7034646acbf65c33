package status

import (
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// Summary renders the step summary: checks and numbers.
func Summary(issue int64, p *guard.Plan, cfg config.Config, notes []string) string {
	var b strings.Builder
	switch {
	case !p.Governed:
		fmt.Fprintf(&b, "## gns-guard: issue #%d is not governed\n\n%s\n", issue, markdown.Cell(p.Skipped, 0))
		return b.String()
	case p.Resolved:
		fmt.Fprintf(&b, "## ✅ gns-guard: issue #%d is clear\n\n", issue)
	case p.Waiting() == len(p.Violations):
		fmt.Fprintf(&b, "## ⏸️ gns-guard: issue #%d is waiting for a person\n\n%s\n\n", issue, waitingText(cfg))
	default:
		fmt.Fprintf(&b, "## ❌ gns-guard: issue #%d has %d violation(s)\n\n", issue, len(p.Violations))
	}
	failed := map[string]bool{}
	for _, v := range p.Violations {
		failed[v.Rule] = true
	}
	b.WriteString("| check | result | fails when |\n|---|---|---|\n")
	for _, r := range guard.Rules() {
		if r.Warning {
			continue
		}
		res := "✅ pass"
		if failed[r.ID] {
			res = "❌ fail"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.ID, res, markdown.Cell(r.When, 0))
	}
	if fs := p.Findings(); len(fs) > 0 {
		b.WriteString("\n")
		findingsTable(&b, fs, p.Links)
	}
	b.WriteString("\n")
	writeNumbers(&b, p.Numbers, true)
	writeBudgetWarning(&b, p, cfg)
	writeBurn(&b, issue, p, MaxCommentChars)
	for _, n := range notes {
		b.WriteString("- " + n + "\n")
	}
	return b.String()
}
