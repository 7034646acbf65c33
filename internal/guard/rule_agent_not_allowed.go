package guard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// checkAgents: an agent outside allowed-agents (when set) in last_agent,
// next_agent, state.assignee or agent_chain sets permission::violation
// and locks.
func checkAgents(e *decision) []Violation {
	if len(e.cfg.AllowedAgents) == 0 || e.cp == nil {
		return nil
	}
	cp := e.cp
	var out []Violation
	check := func(s checkpoint.String, path string, emptyOK bool) {
		if !s.Set || (emptyOK && s.Value == "") || slices.Contains(e.cfg.AllowedAgents, s.Value) {
			return
		}
		out = append(out, e.agentViolation(s.Pos, path, s.Value))
	}
	check(cp.LastAgent, "checkpoint.last_agent", false)
	check(cp.NextAgent, "checkpoint.next_agent", true)
	check(cp.State.Assignee, "checkpoint.state.assignee", true)
	for i, a := range cp.AgentChain.Items {
		check(a, fmt.Sprintf("checkpoint.agent_chain[%d]", i), false)
	}
	return out
}

func (e *decision) agentViolation(pos checkpoint.Pos, path, agent string) Violation {
	v := at(pos, path, "agent %s is not in allowed-agents (%s); the issue is locked until a person resolves it",
		markdown.Quote(agent), strings.Join(e.cfg.AllowedAgents, ", "))
	v.Rule = RuleAgentNotAllowed
	v.Label = e.cfg.Labels.PermissionViolation
	v.Lock = true
	return v
}
