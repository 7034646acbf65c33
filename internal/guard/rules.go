package guard

import (
	"fmt"
	"slices"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// Rule ids. The checkpoint's own ids come from package checkpoint.
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
	RulePermission        = "permission-violation"
	RuleBudgetOverCap     = "budget-over-cap"
	RuleRepositoryBudget  = "repository-budget-exceeded"
	RuleTaskTooLarge      = "task-too-large"
	RuleContextPressure   = "context-pressure"
	RuleCommentProtocol   = "comment-protocol"
	RuleStateDrift        = "state-labels-drift"
	RuleContentTooLarge   = "content-too-large"
	RuleSettingsInvalid   = "settings-invalid"
)

// Maintenance ids: pruning's warnings, never failing a run.
const (
	RulePrune                = "prune"
	RuleCheckpointOverweight = "checkpoint-overweight"
)

// Rule is one rule id: what it checks, what it does, and what tunes it.
// The table (Rules) is the one list of them: the decision runs it, and the
// step summary and `gns-guard rules` print it.
type Rule struct {
	// ID is the id findings carry.
	ID string
	// When says, in one line, when the rule fires.
	When string
	// Effects says what a violation does (warnings: nothing but report).
	Effects string
	// Inputs are the action inputs (and labels) that tune it.
	Inputs []string
	// Warning rules report and never fail a run.
	Warning bool
	// Pull rules run on pull_request events.
	Pull bool
	// AllEvents rules run on issue and pull request events.
	AllEvents bool

	// check is nil when another rule's check emits this id.
	check func(e *decision) []Violation
}

// rules are in the order they run on an issue.
var rules = []Rule{
	{
		ID:      checkpoint.RuleInvalid,
		When:    "the checkpoint does not match schema v2",
		Effects: "fail; every error in the status comment; one context-recovery-needed comment",
		Inputs:  []string{"max-checkpoint-bytes"},
		check:   checkCheckpoint,
	},
	{ID: checkpoint.RuleAmbiguous, When: "the body holds two or more checkpoint blocks", Effects: "fail; context-recovery-needed comment"},
	{
		ID:      RuleCheckpointMissing,
		When:    "a governed issue (cascade:: or budget:: label) has no checkpoint block",
		Effects: "fail; context-recovery-needed comment",
	},
	{
		ID:      checkpoint.RuleTooLarge,
		When:    "the checkpoint block is over max-checkpoint-bytes (not parsed)",
		Effects: "fail; context-recovery-needed comment",
		Inputs:  []string{"max-checkpoint-bytes"},
	},
	{
		ID:   checkpoint.RuleTailTooLong,
		When: "history_tail holds more than twice history-tail entries",
		Effects: "warning; repaired by pruning in the same run, which keeps the last history-tail (check: the same warning and " +
			"the planned prune)",
		Inputs:  []string{"history-tail"},
		Warning: true,
	},
	{ID: RuleCascadeConflict, When: "more than one cascade::depth-N label", Effects: "fail", check: checkCascadeLabels},
	{ID: RuleCascadeMissing, When: "no cascade::depth-N label and no default-max-depth", Effects: "fail", Inputs: []string{"default-max-depth"}},
	{
		ID:      RuleDepthExceeded,
		When:    "depth > N of cascade::depth-N",
		Effects: "label cascade::depth-exceeded; lock; fail",
		Inputs:  []string{"default-max-depth", "admin-token"},
		check:   checkDepth,
	},
	{
		ID:      RuleBudgetExhausted,
		When:    "budget.remaining <= 0, or the budget::exhausted label is set",
		Effects: "label budget::exhausted; fail until a person removes it",
		check:   checkBudget,
	},
	{
		ID:      RuleBudgetOverCap,
		When:    "a new issue's budget.total is over max-budget, until an approver removes budget::exhausted",
		Effects: "label budget::exhausted; fail",
		Inputs:  []string{"max-budget", "budget-admins"},
		check:   checkBudgetOverCap,
	},
	{
		ID: RuleRepositoryBudget,
		When: "a new issue's budget.total would take the budgets granted to the repository's governed issues within " +
			"repository-budget-window over repository-budget (or their grant list does not verify), until an approver " +
			"removes budget::exhausted",
		Effects: "label budget::exhausted; fail",
		Inputs:  []string{"repository-budget", "repository-budget-window", "admin-token", "budget-admins"},
		check:   checkRepositoryBudget,
	},
	{ID: RuleNextOverBudget, When: "next_estimated_tokens > remaining × 0.5", Effects: "fail", check: checkNextOverBudget},
	{
		ID:      RuleAgentNotAllowed,
		When:    "last_agent, next_agent, state.assignee or an agent_chain entry not in allowed-agents",
		Effects: "label permission::violation; lock; fail",
		Inputs:  []string{"allowed-agents", "admin-token"},
		check:   checkAgents,
	},
	{
		ID: RuleTampered,
		When: "against the guard's signed ledger: version or issue changed, consumed down, total or remaining up (but a legal " +
			"carryover), an accepted history entry dropped or changed, by anyone; an approval label removed, a relaxing " +
			"label added, an accepted limit removed or a label renamed into or out of a governance name, by a non-approver " +
			"(judged from the timeline by label id); an approval label removed after the state it flagged changed; the " +
			"checkpoint block of an anchored or ledgered issue deleted; a ledger record edited, unsigned, copied or " +
			"deleted; the task (the body's ## Task section or the title) changed by a non-approver; an accepted agent " +
			"result edited or deleted",
		Effects: "label permission::violation; restore removed approval labels, remove unapproved relaxing labels; fail",
		Inputs:  []string{"ledger-key", "budget-admins", "carryover-ratio", "phase-grant"},
		check:   checkTamper,
	},
	{
		ID:      RulePermission,
		When:    "the permission::violation label is on",
		Effects: "fail until an approver removes it",
		Inputs:  []string{"budget-admins"},
		check:   checkPermissionViolation,
	},
	{
		ID:      RuleTaskTooLarge,
		When:    "next_estimated_tokens >= " + tokens.Format(issues.TooLargeEstimate) + " and no size:: label",
		Effects: "fail",
		check:   checkTaskTooLarge,
	},
	{
		ID: RuleContextPressure,
		When: "(entry load + next task) ÷ max context > pressure-threshold; the entry load is what gns-guard context loads: " +
			"the task, the checkpoint and the last 3 comments that are not the guard's own and whose authors may speak " +
			"(outsiders' are left out)",
		Effects: "label context::pressure-high; fail",
		Inputs:  []string{"pressure-threshold", "encoding"},
		check:   checkContextPressure,
	},
	{
		ID: RuleContentTooLarge,
		When: "the issue body or a comment the guard reads is over 1 MiB (not read), or timeline entries too large to read " +
			"outlast the request budget; an outsider's comment (its author cannot write the issue) is a warning",
		Effects: "label permission::violation; fail until a person shortens or deletes the text and removes the label",
		check:   checkContentTooLarge,
	},
	{
		ID: RuleCommentProtocol,
		When: "an agent result comment (## 🔄) lacks its header or GNS_EVENT footer, or its depth breaks the cascade limit; an " +
			"outsider's comment is a warning",
		Effects: "fail",
		check:   checkCommentProtocol,
	},
	{
		ID: RuleImpersonated,
		When: "an agent comment (## 🔄) by an account that can write the issue speaks as an agent (header or footer) that " +
			"agents does not map to its login; without agents, not judged",
		Effects: "label permission::violation; fail; the comment counts as nobody's result and is left out of the entry load",
		Inputs:  []string{"agents"},
		check:   checkImpersonated,
	},
	{
		ID: RuleUnderReported,
		When: "an agent result comment (## 🔄) holds more tokens, counted exactly, than the rise of budget.consumed its report " +
			"brought (from the guard's ledger, else its footer), or that rise is below the total of the meter receipt in " +
			"its footer; or budget.consumed rose less, since the meter first read the issue, than the meter counted for the " +
			"invocations the issue records (its signed statement, read at meter-url)",
		Effects: "warning (under-report: warn); a violation with under-report: fail; not judged with off; below a meter receipt " +
			"or the meter's statement always a violation",
		Inputs:  []string{"under-report", "encoding", "meter-public-key"},
		Warning: true,
		check:   checkUnderReport,
	},
	{
		ID: RuleUnmetered,
		When: "metering: required and an agent result without a valid meter receipt for its invocation (signed with " +
			"meter-public-key, for this issue), or whose invocation never called through the meter, or metered spend no " +
			"result reports once later results came; with metering off, a receipt that does not verify and spend no result " +
			"reports are warnings; a meter at meter-url that cannot be read is a warning",
		Effects: "fail (a warning with metering off)",
		Inputs:  []string{"metering", "meter-public-key", "meter-url"},
		check:   checkUnmetered,
	},
	{
		ID:      RuleStateDrift,
		When:    "state.labels differs from the live labels",
		Effects: "warning; refreshed on the guard's next body write",
		Warning: true,
		check:   checkStateDrift,
	},
	{
		ID: RuleProtectedPath,
		When: "a pull request changes a path under protected-paths without permission::evolve-system accepted by its record " +
			"or added by an approver (by label id)",
		Effects: "label permission::violation; fail",
		Inputs:  []string{"protected-paths"},
		Pull:    true,
		check:   checkProtectedPaths,
	},
	{
		ID: RuleSettingsInvalid,
		When: "a pull request changes .gitea/gns-guard.yml and its new file does not load (an unknown key, a wrong type, a " +
			"value out of range): merged, it would stop every run",
		Effects: "fail (naming the file, the key and its line) until the pull request fixes it",
		Pull:    true,
		check:   checkPullSettings,
	},
	{
		ID: RulePosture,
		When: "a guarantee of the threat model does not hold in the repository (gns-guard doctor's checks: an untrusted " +
			"account with Code write, Actions write or admin; the guard's workflow, the default branch's protection, the " +
			"secrets, the published key), judged once per default-branch commit with the guard's tokens",
		Effects:   "warning naming the logins and what they can do; the checks the tokens cannot make are said once",
		Inputs:    []string{"admin-token", "budget-admins"},
		Warning:   true,
		AllEvents: true,
	},
	{
		ID:      RulePrune,
		When:    "pruning is due but cannot be planned, or would not make the body smaller",
		Effects: "warning; nothing is written",
		Inputs:  []string{"prune-threshold", "history-tail", "carryover-ratio", "phase-grant"},
		Warning: true,
	},
	{
		ID:      RuleCheckpointOverweight,
		When:    "the checkpoint is over the task size's overhead and has no history left to prune",
		Effects: "warning",
		Warning: true,
	},
}

// Rules returns the rule table, in the order rules run.
func Rules() []Rule { return slices.Clone(rules) }

// run applies the event's rules and records violations.
func (e *decision) run(pull bool) {
	for _, r := range rules {
		if r.check == nil || r.Pull != pull {
			continue
		}
		for _, v := range r.check(e) {
			if v.Rule == "" {
				v.Rule = r.ID
			}
			if v.Severity == "" {
				v.Severity = finding.Error
			}
			if v.Severity == finding.Warning {
				e.plan.Warnings = append(e.plan.Warnings, v.Finding)
				continue
			}
			e.plan.Violations = append(e.plan.Violations, v)
		}
	}
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

// blockPos is the opening fence, or the body's top without a block.
func (e *decision) blockPos() checkpoint.Pos {
	if b := e.parsed.Block(); b != nil {
		return checkpoint.Pos{Line: max(1, b.Line-1), Col: b.Indent + 1}
	}
	return checkpoint.Pos{Line: 1, Col: 1}
}
