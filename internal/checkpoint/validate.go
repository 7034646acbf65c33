package checkpoint

import (
	"fmt"

	"github.com/gns-guard/gns-guard/internal/finding"
)

// Validate checks the invariants of schema v2 that tie values together: the
// issue number, the budget arithmetic, the agent chain's length and the
// length of history_tail. Structural problems are the decoder's.
func Validate(cp *Checkpoint, opts Options) []finding.Finding {
	var fs []finding.Finding
	add := func(rule string, pos Pos, path, format string, args ...any) {
		fs = append(fs, finding.Finding{
			Rule:     rule,
			Severity: finding.Error,
			KeyPath:  path,
			Line:     pos.Line,
			Col:      pos.Col,
			Message:  path + ": " + fmt.Sprintf(format, args...),
		})
	}
	switch {
	case opts.Issue > 0 && cp.Issue.Set && cp.Issue.Value == IssuePlaceholder:
		add(RuleInvalid, cp.Issue.Pos, "checkpoint.issue", "expected this issue's number %d, found %d, the template's placeholder: only "+
			"the guard's first run on the issue sets it (after that, 0 is a changed number)", opts.Issue, cp.Issue.Value)
	case opts.Issue > 0 && cp.Issue.Set && cp.Issue.Value != opts.Issue:
		add(RuleInvalid, cp.Issue.Pos, "checkpoint.issue", "expected this issue's number %d, found %d", opts.Issue, cp.Issue.Value)
	}
	b := cp.Budget
	if b.Total.Set && b.Consumed.Set && b.Remaining.Set && b.Remaining.Value != b.Total.Value-b.Consumed.Value {
		add(RuleInvalid, b.Remaining.Pos, "checkpoint.budget.remaining", "expected total - consumed = %d - %d = %d, found %d",
			b.Total.Value, b.Consumed.Value, b.Total.Value-b.Consumed.Value, b.Remaining.Value)
	}
	if cp.AgentChain.Set && cp.Depth.Set && cp.Depth.Value >= 0 && int64(len(cp.AgentChain.Items)) != cp.Depth.Value+1 {
		add(RuleInvalid, cp.AgentChain.Pos, "checkpoint.agent_chain", "expected depth + 1 = %d agents (one per level from the root), found %d",
			cp.Depth.Value+1, len(cp.AgentChain.Items))
	}
	if limit := opts.tailLimit(); cp.HistoryTail.Set && len(cp.HistoryTail.Items) > TailMost(limit) {
		add(RuleTailTooLong, cp.HistoryTail.Pos, "checkpoint.history_tail", "holds %d entries, more than twice history-tail = %d (%d); "+
			"archive all but the last %d into an archive comment (the action does this itself)",
			len(cp.HistoryTail.Items), limit, TailMost(limit), limit)
	}
	return fs
}
