package metering

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Spawn is a sub-agent asked of the gate (docs/gate.md#spawn): the parent
// invocation's depth (none: a root, opened at the checkpoint's depth),
// the child agent and its estimate.
type Spawn struct {
	// Root: no parent; the invocation opens at the checkpoint's depth.
	Root        bool
	ParentDepth int64
	Agent       string
	Estimate    int64
	// Allowed is allowed-agents (empty: any); Subagents the parent's
	// allowed_subagents (nil: its definition names none).
	Allowed, Subagents []string
}

// SpawnRule names are the guard's, so a refused spawn reads as the
// finding the guard would make of the state it would lead to.
const (
	RuleDepthExceeded   = "depth-exceeded"
	RuleAgentNotAllowed = "agent-not-allowed"
	RuleNextOverBudget  = "next-over-budget"
)

// JudgeSpawn opens sp at its depth or refuses it: past the cascade limit,
// an agent not allowed, or an estimate over half of what remains after
// pending spend (GNS-2's "remaining * 0.5"). A root may take all that
// remains.
func JudgeSpawn(st Standing, p Pending, sp Spawn) (depth int64, ref *Refusal) {
	if st.Refusal != nil {
		return 0, st.Refusal
	}
	depth = st.Depth
	if !sp.Root {
		depth = sp.ParentDepth + 1
	}
	remaining := st.Remaining - p.Unheld(st)
	bound := remaining / 2
	if sp.Root {
		bound = remaining
	}
	refuse := func(rule string, kind Kind, format string, args ...any) (int64, *Refusal) {
		status := 403
		if kind == KindInvalid {
			status = 400
		}
		return depth, &Refusal{Status: status, Kind: kind, Rule: rule, Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case st.MaxDepthKnown && st.MaxDepth >= 0 && depth > int64(st.MaxDepth):
		return refuse(RuleDepthExceeded, KindPermission, "a sub-agent at depth %d passes the cascade limit %d: "+
			"the parent finishes the work itself, or a person raises the issue's cascade label", depth, st.MaxDepth)
	case len(sp.Allowed) > 0 && !slices.Contains(sp.Allowed, sp.Agent):
		return refuse(RuleAgentNotAllowed, KindPermission, "agent %q is not in allowed-agents (%v)", sp.Agent, sp.Allowed)
	case sp.Subagents != nil && !slices.Contains(sp.Subagents, sp.Agent):
		return refuse(RuleAgentNotAllowed, KindPermission, "the parent's definition allows the sub-agents %v, not %q", sp.Subagents, sp.Agent)
	case sp.Estimate < 0:
		return refuse(RuleNextOverBudget, KindInvalid, "the estimate %d is negative", sp.Estimate)
	case sp.Estimate > bound:
		half := "half of"
		if sp.Root {
			half = "all of"
		}
		return refuse(RuleNextOverBudget, KindBudget, "the estimate %d tokens is over %s what remains (%d of %d, after %d metered and not yet reported): "+
			"ask for less, or a person raises the budget. %s", sp.Estimate, half, remaining, st.Total, p.Unheld(st), Resume)
	}
	return depth, nil
}

// AllowedSubagents reads allowed_subagents from an agent definition's
// YAML front matter (GNS-2: an agent calls only the sub-agents listed).
// Nil: the definition names none.
func AllowedSubagents(definition []byte) ([]string, error) {
	text := strings.ReplaceAll(string(definition), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return nil, nil
	}
	front, _, ok := strings.Cut(rest, "\n---")
	if !ok {
		return nil, errors.New("the front matter is not closed by a --- line")
	}
	var fm struct {
		Allowed *[]string `yaml:"allowed_subagents"`
	}
	if err := yaml.Unmarshal([]byte(front), &fm); err != nil {
		return nil, fmt.Errorf("the front matter is not YAML: %v", err)
	}
	if fm.Allowed == nil {
		return nil, nil
	}
	return append([]string{}, *fm.Allowed...), nil
}
