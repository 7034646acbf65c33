package guard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// An approval binds a state (docs/ledger.md#approvals): the record keeps the
// digest of the state the guard flagged. Removing the label accepts that state
// only; a change slipped in after the flag is judged anew.

// flagAfter is the flag of the state this run leaves, for the record it
// writes while an approval label is pending: the checkpoint as pruned by
// this run when it prunes (its body write moves the content version on by
// one), the labels after its label writes.
func (e *decision) flagAfter(after []string) *ledger.Flag {
	cp, cv := e.checkpointAsWritten(), e.in.Issue.ContentVersion
	if pr := e.plan.Prune; pr != nil && e.cp != nil {
		if pc := prunedCheckpoint(pr.Body, e.cfg); pc != nil {
			cp, cv = pc, cv+1
		}
	}
	return &ledger.Flag{ContentVersion: cv, State: e.stateDigest(cp), Labels: e.labelsDigest(after)}
}

// flagNow flags the state as read.
func (e *decision) flagNow() *ledger.Flag {
	return &ledger.Flag{ContentVersion: e.in.Issue.ContentVersion, State: e.stateDigest(e.checkpointAsWritten()),
		Labels: e.labelsDigest(e.in.Issue.LabelNames())}
}

// laterChange says what changed since flagged; "" nothing, nil an old
// record.
func (e *decision) laterChange(flagged *ledger.Flag) string {
	if flagged == nil {
		return ""
	}
	now := e.flagNow()
	var what []string
	if now.State != flagged.State {
		cv := now.ContentVersion
		what = append(what, fmt.Sprintf("the checkpoint was changed after the guard flagged it, in %s (content version %d → %d)",
			editCount(cv-flagged.ContentVersion), flagged.ContentVersion, cv))
	}
	if now.Labels != flagged.Labels {
		what = append(what, "the cascade::, size:: or evolve-system labels changed after the guard flagged the issue")
	}
	return strings.Join(what, "; ")
}

// stateDigest covers the fields rules and ledger read; nil without a
// checkpoint.
func (e *decision) stateDigest(cp *checkpoint.Checkpoint) string {
	if cp == nil {
		if b := e.parsed.Block(); b != nil {
			return ledger.Digest([]string{"unreadable", b.Text()})
		}
		return ledger.Digest([]string{"no checkpoint"})
	}
	b := cp.Budget
	parts := []string{
		fmt.Sprintf("version=%d issue=%d depth=%d", cp.Version.Value, cp.Issue.Value, cp.Depth.Value),
		fmt.Sprintf("total=%d consumed=%d remaining=%d next=%d", b.Total.Value, b.Consumed.Value, b.Remaining.Value, cp.NextEstimatedTokens.Value),
		cp.Phase.Value, cp.LastAgent.Value, cp.LastInvocation.Value, cp.NextAgent.Value, cp.State.Assignee.Value, cp.CurrentTask.Value,
		ledger.HistoryHash("", prune.FromCheckpoint(cp.Entries())),
	}
	for _, a := range cp.AgentChain.Items {
		parts = append(parts, "chain="+a.Value)
	}
	return ledger.Digest(parts)
}

// labelsDigest covers cascade, size and permission::evolve-system labels;
// approvers remove the rest.
func (e *decision) labelsDigest(names []string) string {
	n := e.cfg.Labels
	var judged []string
	for _, name := range names {
		if strings.HasPrefix(name, n.CascadePrefix) && name != n.DepthExceeded || strings.HasPrefix(name, n.SizePrefix) || name == n.EvolveSystem {
			judged = append(judged, name)
		}
	}
	slices.Sort(judged)
	return ledger.Digest(judged)
}
