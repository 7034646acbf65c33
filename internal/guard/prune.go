package guard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// planPrune needs a valid checkpoint: an untrusted body is never rewritten.
func (e *decision) planPrune() {
	if e.cp == nil || e.in.Counter == nil || len(e.trust.tamper) > 0 {
		return
	}
	cp, n := e.cp, e.plan.Numbers
	// An exhausted budget waits for a person; a reset erases the record.
	overBudget := overThreshold(cp.Budget.Consumed.Value, cp.Budget.Total.Value, e.cfg.PruneThreshold) && cp.Budget.Remaining.Value > 0
	tailTooLong := cp.HistoryTail.Set && len(cp.HistoryTail.Items) > checkpoint.TailMost(e.cfg.HistoryTail)
	size := e.taskSize()
	overweight := int64(n.CheckpointTokens) > size.Overhead
	removable := len(cp.Entries()) > e.cfg.HistoryTail || cp.History.Set
	var why []string
	switch {
	case e.plan.ChainForked:
		return // judgeFork
	case overBudget:
		why = append(why, fmt.Sprintf("consumed %d > %s of total %d", cp.Budget.Consumed.Value, percent(e.cfg.PruneThreshold), cp.Budget.Total.Value))
	case tailTooLong:
		why = append(why, fmt.Sprintf("history_tail holds %d entries, over twice history-tail = %d", len(cp.HistoryTail.Items), e.cfg.HistoryTail))
	case overweight && removable:
		why = append(why, fmt.Sprintf("the checkpoint takes %d tokens, over the %d a %s task allows", n.CheckpointTokens, size.Overhead, size.Name))
	case overweight:
		e.plan.Warnings = append(e.plan.Warnings, finding.Finding{
			Rule: RuleCheckpointOverweight, Severity: finding.Warning, KeyPath: "checkpoint",
			Line: e.blockPos().Line, Col: e.blockPos().Col,
			Message: fmt.Sprintf("the checkpoint takes %d tokens, over the %d a %s task allows, and has no history left to prune: shorten "+
				"current_task or other long values", n.CheckpointTokens, size.Overhead, size.Name),
		})
		return
	default:
		return
	}
	cfg := prune.Config{
		CarryoverRatio:  e.cfg.CarryoverRatio,
		PhaseGrant:      e.phaseGrant(),
		TailLimit:       e.cfg.HistoryTail,
		MaxCommentChars: prune.DefaultConfig().MaxCommentChars,
		ResetBudget:     overBudget,
		Signer:          ledger.ConfigKeys(e.cfg).ArchiveSigner(),
		Repo:            e.in.Issue.RepoID,
	}
	// The entries this run archives (and so the archive's hash) do not
	// depend on the chain; a part of the guard's own that holds the same
	// entries is one a concurrent run posted without its body landing: the
	// chain must not be extended past it, or the same entries are archived
	// twice under two links.
	if first, err := prune.Plan(e.in.Issue.Body, e.parsed, e.in.Issue.Number, e.labels, e.in.Now, cfg); err == nil {
		e.planned, e.chain = first.SHA256, nil
	}
	head := e.archiveChain()
	cfg.Prev, cfg.Count = head.link, head.count
	res, err := prune.Plan(e.in.Issue.Body, e.parsed, e.in.Issue.Number, e.labels, e.in.Now, cfg)
	if err != nil {
		e.plan.Warnings = append(e.plan.Warnings, finding.Finding{
			Rule: RulePrune, Severity: finding.Warning, KeyPath: "checkpoint", Line: e.blockPos().Line, Col: e.blockPos().Col,
			Message: "pruning is due (" + strings.Join(why, "; ") + ") but cannot be planned: " + err.Error(),
		})
		return
	}
	if res.Grew {
		e.plan.Warnings = append(e.plan.Warnings, finding.Finding{
			Rule: RulePrune, Severity: finding.Warning, KeyPath: "checkpoint", Line: e.blockPos().Line, Col: e.blockPos().Col,
			Message: fmt.Sprintf("pruning is due (%s) but would not make the body smaller (%d → %d bytes); nothing was written",
				strings.Join(why, "; "), res.OldBytes, res.NewBytes),
		})
		return
	}
	res.Reason = strings.Join(why, "; ")
	res.Body = e.withHint(res.Body)
	res.NewBytes = len(res.Body)
	e.plan.Prune = res
	// The gate measures the pruned checkpoint the next agent loads.
	if b := prunedBlock(res.Body, e.cfg); b != "" {
		e.measureContext(b)
		e.plan.Numbers.Entries = len(res.Kept)
	}
}

// prunedBlock returns the checkpoint block text of a pruned body.
func prunedBlock(body string, cfg config.Config) string {
	blocks := checkpoint.Find(body, cfg.MaxCheckpointBytes)
	if len(blocks) != 1 {
		return ""
	}
	return blocks[0].Text()
}

// prunedCheckpoint decodes the checkpoint of a pruned body, or nil.
func prunedCheckpoint(body string, cfg config.Config) *checkpoint.Checkpoint {
	r := checkpoint.Parse(body, checkpoint.Options{MaxBytes: len(body) + 1, TailLimit: cfg.HistoryTail})
	if !r.Valid() {
		return nil
	}
	return r.Checkpoint
}

// archiveHead: the chain's last link and entries archived.
type archiveHead struct {
	link  string
	count int
	// followed are the parts past the ledger's end.
	followed []prune.Part
	// fork are guard parts diverging where the chain stopped.
	fork []prune.Part
}

// archiveChainParts were posted by a run that died before recording.
func (e *decision) archiveChainParts() []prune.Part { return e.archiveChain().followed }

// archiveChain is the end of the archive chain: the ledger's, followed over the
// guard's verified parts whose entries have left the body (a run posted them
// but died, or lost the status write). An archive whose entries are still in
// the body never got its patch: the prune is planned again from there.
func (e *decision) archiveChain() archiveHead {
	if e.chain != nil {
		return *e.chain
	}
	var h archiveHead
	if l := e.trust.ledger; l != nil {
		h = archiveHead{link: l.Archive, count: l.Archived}
	}
	if e.cp != nil {
		n := e.in.Issue.Number
		var parts []prune.Part
		for _, c := range append(slices.Clone(e.in.Older), e.in.Recent...) {
			if !e.own(c, issues.ArchiveMarkerPrefix(n)) {
				continue
			}
			if a, err := prune.ParseArchive(c.Body); err == nil && a.Issue == n && (a.Repo == 0 || a.Repo == e.in.Issue.RepoID) {
				parts = append(parts, prune.Part{ID: c.ID, Archive: a})
			}
		}
		before := prune.FromCheckpoint(e.cp.Entries())
		h.link, h.count, h.followed, h.fork = prune.Extend(h.link, h.count, parts, ledger.ConfigKeys(e.cfg).ArchiveVerifier(), func(a *prune.Archive) bool {
			return prune.StillHeld(before, a) || (e.planned != "" && a.SHA256 == e.planned)
		})
	}
	if h.link == prune.Genesis {
		h.link = ""
	}
	e.chain = &h
	return h
}

// recordChain records the chain's end: the last part posted, or as found.
func (e *decision) recordChain(l *ledger.Record) {
	h := e.archiveChain()
	if pr := e.plan.Prune; pr != nil {
		h = archiveHead{link: pr.Head, count: pr.Count}
		if h.link == prune.Genesis {
			h.link = ""
		}
	}
	l.Archive, l.Archived = h.link, h.count
}
