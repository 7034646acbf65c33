package meter

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gns-guard/gns-guard/internal/handoff"
	"github.com/gns-guard/gns-guard/internal/meterclient"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/meterstore"
	"github.com/gns-guard/gns-guard/internal/secrets"
)

// gateSubIssue answers POST /OWNER/NAME/issues/N/gate/subissue
// (docs/gate.md#sub-issues).
func (m *Meter) gateSubIssue(w http.ResponseWriter, r *http.Request) {
	var req meterclient.GateSubIssue
	if ref := readJSON(r, &req); ref != nil {
		gateFail(w, ref, nil)
		return
	}
	n, _ := strconv.ParseInt(r.PathValue("n"), 10, 64)
	out, ref := m.subIssue(r.Context(), agentToken(r), r.PathValue("owner"), r.PathValue("name"), n, req)
	if ref != nil {
		gateFail(w, ref, nil)
		return
	}
	gateAnswer(w, http.StatusCreated, out)
}

// subIssue opens a sub-issue under an invocation the caller holds: held
// to the same rules as a spawn (depth, allowed agents, its budget at
// most half of what remains), recorded in the parent's tree, and written
// by the gate's account with the parent's cascade limit.
func (m *Meter) subIssue(ctx context.Context, token, owner, name string, n int64, req meterclient.GateSubIssue) (
	meterclient.GateSubIssued, *metering.Refusal) {
	var out meterclient.GateSubIssued
	if ref := checkSubIssue(req); ref != nil {
		return out, ref
	}
	held := secrets.New(secrets.Secret{Name: "the gate's token", Value: m.o.Gate.Token}, secrets.Secret{Name: "the agent's token", Value: token})
	if f, ok := held.Find(req.Title + "\n" + req.Task); ok {
		return out, &metering.Refusal{Status: 400, Kind: metering.KindInvalid, Rule: "gate-request",
			Message: fmt.Sprintf("the sub-issue's title or task holds %s: remove it; nothing was written", f)}
	}
	c, ref := m.gateCaller(ctx, token, owner, name, n, true)
	if ref != nil {
		return out, ref
	}
	if c.st.Refusal != nil {
		return out, c.st.Refusal
	}
	parent, ref := m.opened(ctx, c, req.Invocation)
	if ref != nil {
		return out, ref
	}
	judge := metering.Spawn{ParentDepth: parent.Depth, Agent: req.Agent, Estimate: req.Budget, Allowed: c.cfg.AllowedAgents}
	if judge.Subagents, ref = m.subagentsOf(ctx, c, parent.Agent); ref != nil {
		return out, ref
	}
	o := meterstore.Opened{Invocation: newInvocation(), Parent: parent.Invocation, Agent: req.Agent, Login: c.login.name,
		Depth: parent.Depth + 1, Estimate: req.Budget, Opened: m.o.Now()}
	o, ref, err := m.o.Store.OpenInvocation(ctx, c.iss, o, func(p metering.Pending, _ []meterstore.Opened) *metering.Refusal {
		_, ref := metering.JudgeSpawn(c.st.Standing, p, judge)
		return ref
	})
	switch {
	case err != nil:
		return out, unavailable("the store", err)
	case ref != nil:
		return out, ref
	}
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
