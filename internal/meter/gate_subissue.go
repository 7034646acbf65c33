package meter

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/gns-guard/gns-guard/internal/handoff"
	"github.com/gns-guard/gns-guard/internal/meterclient"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/secrets"
)

// subIssue opens a sub-issue under an invocation the caller holds: held
// to the same rules as a spawn (depth, allowed agents, its budget at
// most half of what remains), recorded in the parent's tree, and written
// by the gate's account with the parent's cascade limit.
// (docs/gate.md#sub-issues).
func (m *Meter) subIssue(ctx context.Context, a gateAsk, req meterclient.GateSubIssue) (meterclient.GateSubIssued, *metering.Refusal) {
	token, n := a.token, a.n
	var out meterclient.GateSubIssued
	if ref := checkSubIssue(req); ref != nil {
		return out, ref
	}
	held := secrets.New(secrets.Secret{Name: "the gate's token", Value: m.o.Gate.Token}, secrets.Secret{Name: "the agent's token", Value: token})
	if f, ok := held.Find(req.Title + "\n" + req.Task); ok {
		return out, &metering.Refusal{Status: 400, Kind: metering.KindInvalid, Rule: "gate-request",
			Message: fmt.Sprintf("the sub-issue's title or task holds %s: remove it; nothing was written", f)}
	}
	c, ref := m.gateCaller(ctx, a, true)
	if ref != nil {
		return out, ref
	}
	if req.Invocation == "" {
		return out, &metering.Refusal{Status: 400, Kind: metering.KindInvalid, Rule: "gate-request",
			Message: "a sub-issue is opened under an invocation you hold: name it"}
	}
	o, ref := m.openJudged(ctx, c, req.Invocation, req.Agent, req.Budget)
	if ref != nil {
		return out, ref
	}
	parent := o.parent
	s := handoff.SubIssue{Parent: n, ParentInvocation: parent.Invocation, ParentAgent: parent.Agent, Login: c.login.name,
		Title: req.Title, Task: req.Task, Agent: req.Agent, Depth: o.Depth, Budget: req.Budget, Estimate: req.Estimate,
		Labels: []string{m.cascadeLabel(c)}, Now: m.o.Now()}
	return m.openSubIssue(ctx, c, s, o.Invocation)
}

// maxSubIssueTask bounds a sub-issue's task: what every agent on it loads.
const maxSubIssueTask = 16 << 10

// checkSubIssue refuses a request the gate cannot read.
func checkSubIssue(req meterclient.GateSubIssue) *metering.Refusal {
	invalid := func(format string, args ...any) *metering.Refusal {
		return &metering.Refusal{Status: 400, Kind: metering.KindInvalid, Rule: "gate-request", Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case !handoff.ValidName(req.Agent):
		return invalid("agent %q: an agent's name is given, without spaces or |", req.Agent)
	case strings.TrimSpace(req.Title) == "" || strings.TrimSpace(req.Task) == "":
		return invalid("a sub-issue needs a title and a task")
	case len(req.Title) > 255 || len(req.Task) > maxSubIssueTask:
		return invalid("a sub-issue's title is at most 255 bytes and its task %d KiB: the task says what to do, the results go in comments",
			maxSubIssueTask>>10)
	case req.Budget <= 0 || req.Estimate < 0 || req.Estimate > req.Budget:
		return invalid("the budget (%d) must be above 0, and the estimate (%d) from 0 to the budget", req.Budget, req.Estimate)
	}
	return nil
}

// cascadeLabel is the parent's cascade limit as a label.
func (m *Meter) cascadeLabel(c *gateCall) string {
	if !c.st.MaxDepthKnown || c.st.MaxDepth < 0 {
		return c.cfg.Labels.CascadePrefix + "n"
	}
	return c.cfg.Labels.CascadePrefix + strconv.Itoa(c.st.MaxDepth)
}

// openSubIssue writes the sub-issue with the gate's account.
func (m *Meter) openSubIssue(ctx context.Context, c *gateCall, s handoff.SubIssue, inv string) (meterclient.GateSubIssued, *metering.Refusal) {
	var out meterclient.GateSubIssued
	fc, _, ref := m.gateClient(ctx, c)
	if ref != nil {
		return out, ref
	}
	iss, err := fc.CreateIssue(ctx, s.Title, s.Body())
	if err != nil {
		return out, unavailable("could not open the sub-issue", err)
	}
	if err := fc.AddLabels(ctx, iss.Number, s.Labels, nil); err != nil {
		return out, unavailable(fmt.Sprintf("sub-issue #%d is open, but its labels could not be added", iss.Number), err)
	}
	return meterclient.GateSubIssued{Issue: iss.Number, Invocation: inv, Depth: s.Depth, Budget: s.Budget, Labels: s.Labels}, nil
}
