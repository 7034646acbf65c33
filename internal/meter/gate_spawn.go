package meter

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gns-guard/gns-guard/internal/access"
	"github.com/gns-guard/gns-guard/internal/handoff"
	"github.com/gns-guard/gns-guard/internal/meterclient"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/meterstore"
	"github.com/gns-guard/gns-guard/internal/port"
)

// gateSpawn answers POST /OWNER/NAME/issues/N/gate/spawn
// (docs/gate.md#spawn).
func (m *Meter) gateSpawn(w http.ResponseWriter, r *http.Request) {
	var sp meterclient.GateSpawn
	if ref := readJSON(r, &sp); ref != nil {
		gateFail(w, ref, nil)
		return
	}
	n, _ := strconv.ParseInt(r.PathValue("n"), 10, 64)
	out, ref := m.spawn(r.Context(), agentToken(r), r.PathValue("owner"), r.PathValue("name"), n, sp, baseOf(r))
	if ref != nil {
		gateFail(w, ref, nil)
		return
	}
	gateAnswer(w, http.StatusCreated, out)
}

// baseOf is the meter's address as the agent reached it.
func baseOf(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// spawn opens an invocation: a root for the caller's own agent, or a
// sub-agent one level below a parent the caller holds, judged by
// metering.JudgeSpawn inside the issue's lock.
func (m *Meter) spawn(ctx context.Context, token, owner, name string, n int64, sp meterclient.GateSpawn, base string) (
	meterclient.GateSpawned, *metering.Refusal) {
	var out meterclient.GateSpawned
	if !handoff.ValidName(sp.Agent) {
		return out, &metering.Refusal{Status: 400, Kind: metering.KindInvalid, Rule: "gate-request",
			Message: fmt.Sprintf("agent %q: an agent's name is given, without spaces or |", sp.Agent)}
	}
	c, ref := m.gateCaller(ctx, token, owner, name, n, true)
	if ref != nil {
		return out, ref
	}
	if c.st.Refusal != nil {
		return out, c.st.Refusal
	}
	judge := metering.Spawn{Root: sp.Parent == "", Agent: sp.Agent, Estimate: sp.Estimate, Allowed: c.cfg.AllowedAgents}
	depth := c.st.Depth
	if judge.Root {
		if !access.ActsAs(c.cfg.Agents, c.login.name, sp.Agent) {
			return out, &metering.Refusal{Status: 403, Kind: metering.KindPermission, Rule: "agent-impersonated",
				Message: fmt.Sprintf("%s may not open an invocation as agent %q (the setting agents)", c.login.name, sp.Agent)}
		}
	} else {
		parent, ref := m.opened(ctx, c, sp.Parent)
		if ref != nil {
			return out, ref
		}
		judge.ParentDepth, depth = parent.Depth, parent.Depth+1
		if judge.Subagents, ref = m.subagentsOf(ctx, c, parent.Agent); ref != nil {
			return out, ref
		}
	}
	o := meterstore.Opened{Invocation: newInvocation(), Parent: sp.Parent, Agent: sp.Agent, Login: c.login.name,
		Depth: depth, Estimate: sp.Estimate, Opened: m.o.Now()}
	var remaining int64
	o, ref, err := m.o.Store.OpenInvocation(ctx, c.iss, o, func(p metering.Pending, _ []meterstore.Opened) *metering.Refusal {
		_, ref := metering.JudgeSpawn(c.st.Standing, p, judge)
		remaining = c.st.Remaining - p.Unheld(c.st.Standing)
		return ref
	})
	switch {
	case err != nil:
		return out, unavailable("the store", err)
	case ref != nil:
		return out, ref
	}
	prefix := fmt.Sprintf("%s/%s/%s/issues/%d/invocations/%s", strings.TrimRight(base, "/"), owner, name, n, o.Invocation)
	return meterclient.GateSpawned{Invocation: o.Invocation, Parent: o.Parent, Agent: o.Agent, Login: o.Login, Depth: o.Depth,
		Estimate: o.Estimate, Remaining: remaining,
		BaseURLs: map[string]string{"openai": prefix + "/openai/v1", "anthropic": prefix + "/anthropic"}}, nil
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
