package guard

import (
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/agentcomment"
	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// Hidden markers of the comments the guard writes. They are trusted only on
// comments the guard's own user wrote.
const (
	markerStatus   = "<!-- gns-guard:status issue=%d -->"
	markerRecovery = "<!-- gns-guard:recovery issue=%d -->"
	markerDigest   = "<!-- gns-guard:digest issue=%d -->"
	markerArchive  = "<!-- gns-guard:archive issue=%d "
)

// StatusMarker is the hidden marker of an issue's sticky status comment.
func StatusMarker(issue int64) string { return fmt.Sprintf(markerStatus, issue) }

// RecoveryMarker is the hidden marker of a context-recovery request.
func RecoveryMarker(issue int64) string { return fmt.Sprintf(markerRecovery, issue) }

// DigestMarker is the hidden marker of a completion digest.
func DigestMarker(issue int64) string { return fmt.Sprintf(markerDigest, issue) }

// ArchiveMarkerPrefix starts the hidden marker of every archive comment.
func ArchiveMarkerPrefix(issue int64) string { return fmt.Sprintf(markerArchive, issue) }

// own reports whether c is the guard's and carries marker.
func (e *eval) own(c Comment, marker string) bool {
	return c.Author == e.in.Self && e.in.Self != "" && strings.Contains(c.Body, marker)
}

// planPrune decides whether this run prunes, and plans it. Pruning needs a
// valid checkpoint: a body that cannot be trusted is never rewritten.
func (e *eval) planPrune() {
	if e.cp == nil || e.in.Counter == nil {
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

// maintain plans the comments that keep an issue readable: the recovery
// request for a checkpoint that cannot be read, and the completion digest.
func (e *eval) maintain() {
	if e.cp == nil {
		e.planRecovery()
	}
	e.planDigest()
}

func (e *eval) planRecovery() {
	marker := RecoveryMarker(e.in.Issue.Number)
	for _, c := range e.in.Recent {
		if e.own(c, marker) {
			return
		}
	}
	var b strings.Builder
	b.WriteString(agentcomment.RecoveryHeading + "\n\n")
	b.WriteString("The checkpoint in this issue's body cannot be trusted, so no agent should resume from it. ")
	b.WriteString("The orchestrator (or a person) must rebuild it from the last valid checkpoint, the archive comments and the agents' GNS_EVENT footers, then fix the body.\n\n")
	b.WriteString("| where | problem |\n|---|---|\n")
	for _, v := range e.plan.Violations {
		switch v.Rule {
		case "checkpoint-invalid", "checkpoint-ambiguous", "checkpoint-missing", "checkpoint-too-large":
			fmt.Fprintf(&b, "| %d:%d | %s |\n", v.Line, v.Col, markdown.Cell(v.Message, 0))
		}
	}
	b.WriteString("\n`gns-guard history` rebuilds the full history; `gns-guard check` validates a fixed body before it is saved.\n\n")
	b.WriteString(marker + "\n")
	e.plan.Recovery = b.String()
}

// planDigest posts a completion digest once digest-after agent results have
// accumulated since the last digest or archive.
func (e *eval) planDigest() {
	if e.cfg.DigestAfter <= 0 {
		return
	}
	issue := e.in.Issue.Number
	var results []agentcomment.Result
	for _, c := range e.in.Recent {
		if e.own(c, DigestMarker(issue)) || e.own(c, ArchiveMarkerPrefix(issue)) {
			results = results[:0]
			continue
		}
		if r, ok := agentcomment.ResultOf(c.ID, c.HTMLURL, c.Body); ok {
			results = append(results, r)
		}
	}
	if len(results) < e.cfg.DigestAfter {
		return
	}
	e.plan.Digest = agentcomment.Digest(issue, results) + "\n" + DigestMarker(issue) + "\n"
}

// prunedBlock returns the checkpoint block text of a pruned body.
func prunedBlock(body string, cfg Config) string {
	blocks := checkpoint.Find(body, cfg.MaxCheckpointBytes)
	if len(blocks) != 1 {
		return ""
	}
	return blocks[0].Raw()
}
