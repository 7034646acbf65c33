package guard

import (
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// planPrune decides whether this run prunes, and plans it. Pruning needs a
// valid checkpoint: a body that cannot be trusted is never rewritten.
func (e *eval) planPrune() {
	if e.cp == nil || e.in.Counter == nil || len(e.trust.tamper) > 0 {
		return
	}
	cp, n := e.cp, e.plan.Numbers
	// An exhausted budget waits for a person; a reset would only erase the
	// record of what was spent.
	overBudget := float64(cp.Budget.Consumed.Value) > e.cfg.PruneThreshold*float64(cp.Budget.Total.Value) && cp.Budget.Remaining.Value > 0
	tailTooLong := cp.HistoryTail.Set && len(cp.HistoryTail.Items) > e.cfg.HistoryTail
	size := e.taskSize()
	overweight := int64(n.CheckpointTokens) > size.Overhead
	removable := len(cp.Entries()) > e.cfg.HistoryTail || cp.History.Set
	var why []string
	switch {
	case overBudget:
		why = append(why, fmt.Sprintf("consumed %d > %s of total %d", cp.Budget.Consumed.Value, percent(e.cfg.PruneThreshold), cp.Budget.Total.Value))
	case tailTooLong:
		why = append(why, fmt.Sprintf("history_tail holds %d entries, over history-tail = %d", len(cp.HistoryTail.Items), e.cfg.HistoryTail))
	case overweight && removable:
		why = append(why, fmt.Sprintf("the checkpoint takes %d tokens, over the %d a %s task allows", n.CheckpointTokens, size.Overhead, size.Name))
	case overweight:
		e.plan.Warnings = append(e.plan.Warnings, finding.Finding{
			Rule: RuleCheckpointOverweight, Severity: finding.Warning, KeyPath: "checkpoint",
			Line: e.blockPos().Line, Col: e.blockPos().Col,
			Message: fmt.Sprintf("the checkpoint takes %d tokens, over the %d a %s task allows, and has no history left to prune: shorten current_task or other long values", n.CheckpointTokens, size.Overhead, size.Name),
		})
		return
	default:
		return
	}
	cfg := prune.Config{
		CarryoverRatio:  e.cfg.CarryoverRatio,
		PhaseGrant:      e.cfg.PhaseGrant,
		TailLimit:       e.cfg.HistoryTail,
		MaxCommentChars: prune.DefaultConfig().MaxCommentChars,
		ResetBudget:     overBudget,
	}
	res, err := prune.Plan(e.in.Issue.Body, e.parsed, e.in.Issue.Number, e.labels, e.in.Now, cfg)
	if err != nil {
		e.plan.Warnings = append(e.plan.Warnings, finding.Finding{
			Rule: RulePrune, Severity: finding.Warning, KeyPath: "checkpoint",
			Line: e.blockPos().Line, Col: e.blockPos().Col,
			Message: "pruning is due (" + strings.Join(why, "; ") + ") but cannot be planned: " + err.Error(),
		})
		return
	}
	if res.Grew {
		e.plan.Warnings = append(e.plan.Warnings, finding.Finding{
			Rule: RulePrune, Severity: finding.Warning, KeyPath: "checkpoint",
			Line: e.blockPos().Line, Col: e.blockPos().Col,
			Message: fmt.Sprintf("pruning is due (%s) but would not make the body smaller (%d → %d bytes); nothing was written", strings.Join(why, "; "), res.OldBytes, res.NewBytes),
		})
		return
	}
	res.Reason = strings.Join(why, "; ")
	e.plan.Prune = res
	// The gate measures what the next agent will load: the pruned checkpoint,
	// and the metrics record counts that checkpoint's entries.
	if b := prunedBlock(res.Body, e.cfg); b != "" {
		e.measureContext(b)
		e.plan.Numbers.Entries = len(res.Kept)
	}
}

// prunedBlock returns the checkpoint block text of a pruned body.
func prunedBlock(body string, cfg Config) string {
	blocks := checkpoint.Find(body, cfg.MaxCheckpointBytes)
	if len(blocks) != 1 {
		return ""
	}
	return blocks[0].Raw()
}

// prunedCheckpoint decodes the checkpoint of a pruned body, or nil.
func prunedCheckpoint(body string, cfg Config) *checkpoint.Checkpoint {
	r := checkpoint.Parse(body, checkpoint.Options{MaxBytes: len(body) + 1, TailLimit: cfg.HistoryTail})
	if !r.Valid() {
		return nil
	}
	return r.Checkpoint
}
