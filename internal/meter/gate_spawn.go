package meter

import (
	"context"
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/access"
	"github.com/gns-guard/gns-guard/internal/handoff"
	"github.com/gns-guard/gns-guard/internal/meterclient"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/meterstore"
	"github.com/gns-guard/gns-guard/internal/port"
)

// spawn opens an invocation: a root for the caller's own agent, or a
// sub-agent one level below a parent the caller holds, judged by
// metering.JudgeSpawn inside the issue's lock.
// (docs/gate.md#spawn).
func (m *Meter) spawn(ctx context.Context, a gateAsk, sp meterclient.GateSpawn) (meterclient.GateSpawned, *metering.Refusal) {
	var out meterclient.GateSpawned
	if !handoff.ValidName(sp.Agent) {
		return out, &metering.Refusal{Status: 400, Kind: metering.KindInvalid, Rule: "gate-request",
			Message: fmt.Sprintf("agent %q: an agent's name is given, without spaces or |", sp.Agent)}
	}
	c, ref := m.gateCaller(ctx, a, true)
	if ref != nil {
		return out, ref
	}
	if sp.Parent == "" && !access.ActsAs(c.cfg.Agents, c.login.name, sp.Agent) {
		return out, &metering.Refusal{Status: 403, Kind: metering.KindPermission, Rule: "agent-impersonated",
			Message: fmt.Sprintf("%s may not open an invocation as agent %q (the setting agents)", c.login.name, sp.Agent)}
	}
	o, ref := m.openJudged(ctx, c, sp.Parent, sp.Agent, sp.Estimate)
	if ref != nil {
		return out, ref
	}
	prefix := fmt.Sprintf("%s/%s/%s/issues/%d/invocations/%s", strings.TrimRight(a.base, "/"), a.owner, a.name, a.n, o.Invocation)
	return meterclient.GateSpawned{Invocation: o.Invocation, Parent: o.Parent, Agent: o.Agent, Login: o.Login, Depth: o.Depth,
		Estimate: o.Estimate, Remaining: o.remaining,
		BaseURLs: map[string]string{"openai": prefix + "/openai/v1", "anthropic": prefix + "/anthropic"}}, nil
}

// opening is an invocation the gate opened, its parent's opening (zero
// for a root), and what remained of the budget then.
type opening struct {
	meterstore.Opened
	parent    meterstore.Opened
	remaining int64
}

// openJudged opens an invocation of agent under parent (none: a root at
// the checkpoint's depth), once metering.JudgeSpawn accepts it in the
// issue's lock.
func (m *Meter) openJudged(ctx context.Context, c *gateCall, parent, agent string, estimate int64) (opening, *metering.Refusal) {
	var op opening
	if c.st.Refusal != nil {
		return op, c.st.Refusal
	}
	judge := metering.Spawn{Root: parent == "", Agent: agent, Estimate: estimate, Allowed: c.cfg.AllowedAgents}
	depth := c.st.Depth
	if !judge.Root {
		var ref *metering.Refusal
		if op.parent, ref = m.opened(ctx, c, parent); ref != nil {
			return op, ref
		}
		judge.ParentDepth, depth = op.parent.Depth, op.parent.Depth+1
		if judge.Subagents, ref = m.subagentsOf(ctx, c, op.parent.Agent); ref != nil {
			return op, ref
		}
	}
	o := meterstore.Opened{Invocation: newInvocation(), Parent: parent, Agent: agent, Login: c.login.name,
		Depth: depth, Estimate: estimate, Opened: m.o.Now()}
	o, ref, err := m.o.Store.OpenInvocation(ctx, c.iss, o, func(p metering.Pending, _ []meterstore.Opened) *metering.Refusal {
		_, ref := metering.JudgeSpawn(c.st.Standing, p, judge)
		op.remaining = c.st.Remaining - p.Unheld(c.st.Standing)
		return ref
	})
	if err != nil {
		return op, unavailable("the store", err)
	}
	op.Opened = o
	return op, ref
}

// subagentsOf reads the parent agent's allowed_subagents from its
// definition, .kilo/agents/AGENT.md's front matter, with the gate's
// token; nil when the file or the key is absent.
func (m *Meter) subagentsOf(ctx context.Context, c *gateCall, agent string) ([]string, *metering.Refusal) {
	fc, _, ref := m.gateClient(ctx, c)
	if ref != nil {
		return nil, ref
	}
	return readSubagents(ctx, fc, agent)
}

// readSubagents is subagentsOf's read and parse.
func readSubagents(ctx context.Context, fc port.IssueReader, agent string) ([]string, *metering.Refusal) {
	if strings.ContainsAny(agent, "/\\") || strings.Contains(agent, "..") {
		return nil, nil
	}
	path := ".kilo/agents/" + agent + ".md"
	data, err := fc.File(ctx, path, 256<<10)
	if err != nil {
		return nil, nil // no definition: allowed-agents alone decides
	}
	list, err := metering.AllowedSubagents(data)
	if err != nil {
		return nil, &metering.Refusal{Status: 409, Kind: metering.KindPermission, Rule: "agent-not-allowed",
			Message: fmt.Sprintf("%s: %v; a person fixes the definition", path, err)}
	}
	return list, nil
}
