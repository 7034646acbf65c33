package guard

import (
	"fmt"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/finding"
)

// Rule ids. The checkpoint's own ids (checkpoint-invalid, -ambiguous,
// -too-large, history-tail-length) come from package checkpoint.
const (
	RuleCheckpointMissing = checkpoint.RuleMissing
	RuleCascadeConflict   = "cascade-label-conflict"
	RuleCascadeMissing    = "cascade-label-missing"
	RuleDepthExceeded     = "depth-exceeded"
	RuleBudgetExhausted   = "budget-exhausted"
	RuleNextOverBudget    = "next-over-budget"
	RuleAgentNotAllowed   = "agent-not-allowed"
	RuleProtectedPath     = "protected-path"
	RuleTampered          = "checkpoint-tampered"
	RuleTaskTooLarge      = "task-too-large"
	RuleContextPressure   = "context-pressure"
	RuleCommentProtocol   = "comment-protocol"
	RuleStateDrift        = "state-labels-drift"
)

// rule is one check: a pure function of the evaluation.
type rule struct {
	id    string
	check func(e *eval) []Violation
}

// issueRules run on issues and issue_comment events, in this order. Each
// lives in its own file: rule_<id>.go.
var issueRules = []rule{
	{checkpoint.RuleInvalid, checkCheckpoint},
	{RuleCascadeConflict, checkCascadeLabels},
	{RuleDepthExceeded, checkDepth},
	{RuleBudgetExhausted, checkBudget},
	{RuleNextOverBudget, checkNextOverBudget},
	{RuleAgentNotAllowed, checkAgents},
	{RuleTampered, checkTamper},
	{RuleContextPressure, checkContextPressure},
	{RuleCommentProtocol, checkCommentProtocol},
	{RuleStateDrift, checkStateDrift},
}

// pullRequestRules run on pull_request events.
var pullRequestRules = []rule{
	{RuleProtectedPath, checkProtectedPaths},
}

// at builds a violation at a checkpoint position.
func at(pos checkpoint.Pos, path, format string, args ...any) Violation {
	return Violation{Finding: finding.Finding{
		KeyPath: path,
		Line:    pos.Line,
		Col:     pos.Col,
		Message: fmt.Sprintf(format, args...),
	}}
}

// blockPos is where findings about the whole checkpoint point: the
// opening fence, or the top of the body when there is no block.
func (e *eval) blockPos() checkpoint.Pos {
	if b := e.parsed.Block(); b != nil {
		return checkpoint.Pos{Line: max(1, b.Line-1), Col: b.Indent + 1}
	}
	return checkpoint.Pos{Line: 1, Col: 1}
}
