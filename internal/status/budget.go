package status

import (
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/burn"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// waitingText says what the issue waits for, and who ends it.
func waitingText(cfg config.Config) string {
	return fmt.Sprintf("⏸️ **Waiting for a person**: the budget is used up and `%s` is on, so no agent may go on. Nothing is broken: "+
		"an approver (%s) raises `budget.total` or accepts the state, and removes `%s` to let the workflow continue.",
		markdown.Cell(cfg.Labels.BudgetExhausted, 80), cfg.Approvers(), markdown.Cell(cfg.Labels.BudgetExhausted, 80))
}

// Budget warning thresholds: used shares that warn before the wall.
const (
	BudgetWarnFirst  = 0.6
	BudgetWarnSecond = 0.8
)

// writeBudgetWarning warns when 60% and when 80% of the budget is used and
// the budget is not exhausted yet (then the comment waits for a person)
// and this run does not prune (which starts a new phase budget).
func writeBudgetWarning(b *strings.Builder, p *guard.Plan, cfg config.Config) {
	n := p.Numbers
	if !n.Known || n.BudgetTotal <= 0 || n.BudgetRemaining <= 0 || p.Waiting() > 0 || p.Prune != nil {
		return
	}
	ratio := float64(n.BudgetConsumed) / float64(n.BudgetTotal)
	switch {
	case ratio >= BudgetWarnSecond:
		fmt.Fprintf(b, "⚠️ **%s of the budget is used** (%s of %s tokens, %s left): above prune-threshold (%s) the guard prunes the "+
			"history and the next phase starts with %s of what is left; past the budget, the issue waits for a person.\n\n",
			percent(BudgetWarnSecond), tokens.Format(n.BudgetConsumed), tokens.Format(n.BudgetTotal), tokens.Format(n.BudgetRemaining),
			percent(cfg.PruneThreshold), percent(cfg.CarryoverRatio))
	case ratio >= BudgetWarnFirst:
		fmt.Fprintf(b, "⚠️ **%s of the budget is used** (%s of %s tokens, %s left): plan the remaining steps with that in mind; at %s "+
			"the guard warns again.\n\n",
			percent(BudgetWarnFirst), tokens.Format(n.BudgetConsumed), tokens.Format(n.BudgetTotal), tokens.Format(n.BudgetRemaining),
			percent(BudgetWarnSecond))
	}
}

// writeBurn writes the burn chart and the tokens per agent from the
// ledger's series, folded, when it holds at least 2 points and the text
// stays within room characters.
func writeBurn(b *strings.Builder, issue int64, p *guard.Plan, room int) {
	s := ledger.BurnSeries(issue, "", p.Ledger)
	chart := burn.IssueChart(s)
	if chart == "" {
		return
	}
	text := fmt.Sprintf("<details><summary>Budget burn: %d accepted step(s)</summary>\n\n%s\n", len(s.Points), chart)
	if t := burn.AgentTable(s); t != "" {
		text += t + "\n"
	}
	text += "</details>\n\n"
	if !strings.HasSuffix(b.String(), "\n\n") {
		text = "\n" + text
	}
	if len([]rune(b.String()))+len([]rune(text)) > room {
		return
	}
	b.WriteString(text)
}
