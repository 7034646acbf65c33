package metering

import (
	"fmt"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// Standing is an issue as the meter judges it before a call: refused
// outright, or its budget.
type Standing struct {
	// Refusal, when set, refuses every call in this state.
	Refusal *Refusal
	// Total, Consumed and Remaining are the checkpoint's budget.
	Total, Consumed, Remaining int64
	// Base is budget.consumed when the meter first saw the issue, less what
	// the invocations recorded then had spent through it (Pending.Unheld).
	Base int64
	// Depth is the checkpoint's; MaxDepth the cascade limit (-1:
	// unlimited), known or not. The gate's spawns are held to them.
	Depth         int64
	MaxDepth      int
	MaxDepthKnown bool
}

// Facts are what the meter read of an issue.
type Facts struct {
	Issue    issues.Issue
	Governed bool
	// Checkpoint is the body's checkpoint, nil if unreadable.
	Checkpoint *checkpoint.Checkpoint
	// Plan is the guard's decision on the issue.
	Plan *guard.Plan
	// Judged says a guard status comment holds a verified record.
	Judged bool
	// Unjudged is set if the guard is late on the body.
	Unjudged *ledger.Unjudged
	Grace    time.Duration
}

// Judge says whether an issue's state lets calls through: governed, not
// locked, judged by the guard, and passing its rules.
func Judge(f Facts) Standing {
	n := f.Issue.Number
	refuse := func(rule, format string, args ...any) Standing {
		kind := KindPermission
		if strings.HasPrefix(rule, "budget-") || rule == "next-over-budget" || rule == "repository-budget-exceeded" {
			kind = KindBudget // the guard fails the state for its budget
		}
		return Standing{Refusal: &Refusal{Status: 403, Kind: kind, Rule: rule, Message: fmt.Sprintf("issue #%d: ", n) + fmt.Sprintf(format, args...)}}
	}
	switch {
	case !f.Governed || f.Checkpoint == nil && (f.Plan == nil || len(f.Plan.Violations) == 0):
		return refuse("meter-not-governed",
			"the issue holds no checkpoint the guard governs: the meter lets calls through only on a governed issue (see docs/agents.md)")
	case f.Issue.Locked:
		return refuse("meter-issue-locked", "the issue is locked: a person unlocks it once the violation is resolved")
	case !f.Judged:
		return refuse("meter-unjudged", "the guard has not judged the issue: no status comment of the guard's holds a ledger record that verifies; "+
			"calls go through once the guard's workflow has run on it")
	case f.Unjudged != nil:
		return refuse("meter-unjudged", "%s", f.Unjudged.Why(n, f.Grace))
	}
	if f.Plan != nil && len(f.Plan.Violations) > 0 {
		v := f.Plan.Violations[0]
		more := ""
		if k := len(f.Plan.Violations) - 1; k > 0 {
			more = fmt.Sprintf(" (and %d more)", k)
		}
		ref := refuse(v.Rule, "the guard fails this state: %s%s", strings.TrimSuffix(v.Message, "."), more)
		if ref.Refusal.Kind == KindBudget {
			ref.Refusal.Message += ". " + Resume
		} else {
			ref.Refusal.Message += "; no call goes through until a person resolves it"
		}
		return ref
	}
	b := f.Checkpoint.Budget
	st := Standing{Total: b.Total.Value, Consumed: b.Consumed.Value, Remaining: b.Remaining.Value, Depth: f.Checkpoint.Depth.Value}
	if f.Plan != nil {
		st.MaxDepth, st.MaxDepthKnown = f.Plan.Numbers.MaxDepth, f.Plan.Numbers.MaxDepthKnown
	}
	return st
}
