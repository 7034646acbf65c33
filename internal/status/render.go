package status

import (
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// Render renders the sticky status comment of a plan. notes are what
// happened when the plan was applied (a lock that failed, say); they state
// facts, not events, so a re-run with nothing new renders the same text and
// makes no write. record is the hidden ledger line (ledger.Encode) the
// comment carries, or "".
func Render(issue int64, p *guard.Plan, cfg config.Config, notes []string, record string) string {
	var b strings.Builder
	b.WriteString(issues.StatusMarker(issue) + "\n")
	waiting := p.Waiting()
	if p.Resolved {
		b.WriteString("## ✅ gns-guard: all clear\n\nNo violations.")
		if len(p.Warnings) > 0 {
			fmt.Fprintf(&b, " %d warning(s):\n\n", len(p.Warnings))
			findingsTable(&b, p.Findings(), p.Links)
		} else {
			b.WriteString("\n")
		}
	} else if waiting == len(p.Violations) {
		b.WriteString("## ⏸️ gns-guard: waiting for a person\n\n")
		b.WriteString(waitingText(cfg) + "\n\n")
		findingsTable(&b, p.Findings(), p.Links)
	} else {
		fmt.Fprintf(&b, "## ❌ gns-guard: %d violation(s)\n\n", len(p.Violations))
		b.WriteString("The workflow must not go on until these are fixed. Line:column count in the issue body.\n\n")
		if waiting > 0 {
			b.WriteString(waitingText(cfg) + "\n\n")
		}
		findingsTable(&b, p.Findings(), p.Links)
	}
	b.WriteString("\n")
	// All clear, the comment shows only what the body decides (budget and
	// depth): a new comment changes the entry load, and rewriting an
	// all-clear comment for it would cost every comment event a write.
	writeNumbers(&b, p.Numbers, !p.Resolved)
	writeBudgetWarning(&b, p, cfg)
	writeBurn(&b, issue, p, MaxCommentChars-len([]rune(record))-2000)
	if l := p.Ledger; l != nil {
		b.WriteString("\n" + ledgerLine(p, cfg) + "\n")
	}
	if len(notes) > 0 {
		b.WriteString("\n")
		for _, n := range notes {
			b.WriteString("- " + n + "\n")
		}
	}
	b.WriteString("\n<sub>gns-guard keeps this comment up to date on every run; it holds the guard's ledger. Do not edit it: the " +
		"guard puts its text back, and a changed ledger fails the workflow.</sub>\n")
	return capComment(b.String(), record)
}

// capComment cuts visible text at a line to fit MaxCommentChars with the
// record.
func capComment(text, record string) string {
	tail := ""
	if record != "" {
		tail = record + "\n"
	}
	room := MaxCommentChars - len([]rune(tail))
	if r := []rune(text); len(r) > room {
		cut := string(r[:room-200])
		if i := strings.LastIndex(cut, "\n"); i > 0 {
			cut = cut[:i+1]
		}
		text = cut + "\n… (cut to stay within a comment's size: the run's log has everything)\n"
	}
	return text + tail
}

// MaxCommentChars is Gitea's renderer's bound, shared with archive parts.
const MaxCommentChars = 65536

func findingsTable(b *strings.Builder, fs []finding.Finding, links map[string]string) {
	b.WriteString("| | rule | where | finding |\n|---|---|---|---|\n")
	if len(fs) > guard.MaxTableRows {
		defer fmt.Fprintf(b, "| | | | … and %d more finding(s): the run's log lists them |\n", len(fs)-guard.MaxTableRows)
		fs = fs[:guard.MaxTableRows]
	}
	for _, f := range fs {
		icon := "❌"
		if !f.IsError() {
			icon = "⚠️"
		}
		where := "–"
		if f.Line > 0 {
			where = fmt.Sprintf("%d:%d", f.Line, f.Col)
		}
		if id, ok := strings.CutPrefix(f.KeyPath, "comment#"); ok && isDigits(id) {
			what := "comment " + id
			if u := links[f.KeyPath]; u != "" {
				what = fmt.Sprintf("[%s](%s)", what, markdown.URL(u))
			}
			where = what + " " + where
		}
		fmt.Fprintf(b, "| %s | `%s` | %s | %s |\n", icon, f.Rule, where, markdown.Cell(f.Message, 600))
	}
}

// writeNumbers writes budget bar, depth, and withContext the entry context.
func writeNumbers(b *strings.Builder, n guard.Numbers, withContext bool) {
	if n.BudgetTotal > 0 || n.BudgetConsumed > 0 {
		ratio := 1.0
		if n.BudgetTotal > 0 {
			ratio = float64(n.BudgetConsumed) / float64(n.BudgetTotal)
		}
		fmt.Fprintf(b, "**Budget** `%s` %s of %s tokens consumed in this phase (%s), %s left · **Lifetime** %s\n\n",
			Bar(ratio, 20), tokens.Format(n.BudgetConsumed), tokens.Format(n.BudgetTotal), percent(ratio), tokens.Format(n.BudgetRemaining), LifetimeText(n))
		if step, ok := guard.BudgetStep(n.BudgetConsumed, n.BudgetTotal); ok && n.BudgetRemaining > 0 {
			fmt.Fprintf(b, "> ⚠️ %d%% of the phase's budget is used: an approver raises `budget.total` before it runs out, or the meter "+
				"refuses the next call and the chain waits\n\n", step)
		}
		if n.MeteredResults > 0 {
			fmt.Fprintf(b, "**Metered** %s tokens by the meter's receipts of the last %d results; their reports added %s\n\n",
				tokens.Format(n.Metered), n.MeteredResults, tokens.Format(n.MeteredReported))
		}
	}
	var parts []string
	if n.MaxDepthKnown {
		parts = append(parts, fmt.Sprintf("**Depth** %d of max %s", n.Depth, depthLimitText(n.MaxDepth)))
	}
	if n.MaxContext > 0 && withContext {
		parts = append(parts, fmt.Sprintf("**Entry context** %s of %s tokens (%s; %s task: entry load %s, of which the last 3 comments "+
			"that are not the guard's %s, + next task %s)",
			tokens.Format(n.ContextTokens), tokens.Format(n.MaxContext), percent(n.ContextRatio), n.TaskSize,
			tokens.Format(int64(n.EntryTokens)), tokens.Format(int64(n.CommentTokens)), tokens.Format(n.NextEstimated)))
	}
	if len(parts) > 0 {
		b.WriteString(strings.Join(parts, " · ") + "\n")
	}
}

// LifetimeText: tokens across phases, and how many before this one.
func LifetimeText(n guard.Numbers) string {
	if n.EarlierPhases <= 0 {
		return tokens.Format(n.Lifetime) + " tokens consumed on the issue, all in this phase"
	}
	return fmt.Sprintf("%s tokens consumed on the issue, %s of them in earlier phases", tokens.Format(n.Lifetime), tokens.Format(n.EarlierPhases))
}

// Bar draws ratio, clamped to 0..1, in width cells.
func Bar(ratio float64, width int) string {
	ratio = max(0, min(1, ratio))
	full := int(ratio*float64(width) + 0.5)
	return strings.Repeat("█", full) + strings.Repeat("░", width-full)
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// ledgerLine tells people what the ledger holds.
func ledgerLine(p *guard.Plan, cfg config.Config) string {
	l := p.Ledger
	keys := ledger.ConfigKeys(cfg)
	mode := "signed with ledger-key, key " + keys.SigningKeyID()
	if !keys.Signs() {
		mode = "unsigned: set ledger-key, or an issue writer can forge it"
	}
	if !l.Baseline {
		return fmt.Sprintf("**Ledger** no accepted state yet: the guard takes one once the checkpoint is valid and no violation label "+
			"waits for an approver (%s) (%s).", cfg.Approvers(), mode)
	}
	how := "accepted"
	if l.Adopted {
		how = "adopted as the baseline (no earlier ledger was found)"
	}
	return fmt.Sprintf("**Ledger** %s: phase %s, budget %s of %s consumed, %s remaining, body content version %d (%s).",
		how, markdown.Cell(markdown.Quote(l.Phase), 80), tokens.Format(l.Consumed), tokens.Format(l.Total), tokens.Format(l.Remaining),
		l.ContentVersion, mode)
}

// depthLimitText renders a depth limit for messages.
func depthLimitText(limit int) string {
	if limit == config.Unlimited {
		return "unlimited"
	}
	return fmt.Sprint(limit)
}

// percent shows a ratio as a whole percentage.
func percent(r float64) string {
	return fmt.Sprintf("%.0f%%", r*100)
}
