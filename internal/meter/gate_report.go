package meter

import (
	"context"
	"errors"
	"fmt"

	"github.com/gns-guard/gns-guard/internal/agentwrite"
	"github.com/gns-guard/gns-guard/internal/handoff"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/meterclient"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/meterstore"
	"github.com/gns-guard/gns-guard/internal/receipt"
	"github.com/gns-guard/gns-guard/internal/scopes"
	"github.com/gns-guard/gns-guard/internal/secrets"
)

// report judges the agent's report as the guard would and writes it with
// the gate's account: the agent's login in the header and the meter's
// signature, the receipt and the cascade log from the store.
// (docs/gate.md#report). A refused report keeps its result: the findings.
func (m *Meter) report(ctx context.Context, a gateAsk, g meterclient.GateReport) (*agentwrite.ReportResult, *metering.Refusal) {
	token, n := a.token, a.n
	c, ref := m.gateCaller(ctx, a, false)
	if ref != nil {
		return nil, ref
	}
	rep := g.Report()
	req := agentwrite.ReportRequest{Issue: n, Report: rep, DryRun: g.DryRun}
	if err := req.CheckDone(); err != nil {
		return nil, refusalOf(err)
	}
	if err := req.CheckNames(); err != nil {
		return nil, refusalOf(err)
	}
	o, ref := m.opened(ctx, c, rep.Invocation)
	if ref != nil {
		return nil, ref
	}
	if o.Agent != rep.Agent {
		return nil, &metering.Refusal{Status: 403, Kind: metering.KindPermission, Rule: "agent-impersonated",
			Message: fmt.Sprintf("invocation %q was opened for agent %s, not %s", rep.Invocation, o.Agent, rep.Agent)}
	}
	subtree, ref := m.meteredReport(ctx, c, &req)
	if ref != nil {
		return nil, ref
	}
	fc, self, ref := m.gateClient(ctx, c)
	if ref != nil {
		return nil, ref
	}
	rd := live.Open(live.Dial{Verb: "gate", Server: m.o.Server, Repo: c.repo.name, TokenSource: "the gate's token"}, fc)
	rd.Where.Scopes, rd.Keys = scopes.Join(scopes.Of("report")), ledger.ConfigKeys(c.cfg)
	conn := agentwrite.Conn{Reader: rd, Client: fc, Config: c.cfg, Counter: m.counter(c.cfg.Encoding), Self: self, Now: m.o.Now,
		Attest: func(n int64, rep handoff.Report, comment string) string {
			return m.o.Key.Attest(receipt.Attestation{Repo: c.repo.name, Issue: n, Login: c.login.name, Agent: rep.Agent, Invocation: rep.Invocation}, comment)
		}}
	req.Held = []secrets.Secret{{Name: "the gate's token", Value: m.o.Gate.Token}, {Name: "the agent's token", Value: token}}
	res, err := agentwrite.Report(ctx, conn, req)
	switch {
	case errors.Is(err, agentwrite.ErrRefused):
		return res, &metering.Refusal{Status: 422, Kind: metering.KindPermission, Rule: meterclient.RefusedReport,
			Message: fmt.Sprintf("the guard would fail the state this report leaves (%d findings): nothing was written", len(res.Findings))}
	case err != nil:
		return res, refusalOf(err)
	}
	if res.Outcome == "written" && len(subtree) > 0 {
		// The sub-agents' spend is in this report's consumed now.
		if _, err := m.o.Store.MarkReported(ctx, c.iss, res.After.Consumed, subtree); err != nil {
			res.Notes = append(res.Notes, "the meter could not mark the sub-agents' spend reported: "+err.Error())
		}
	}
	return res, nil
}

// meteredReport puts the invocation's signed receipt and its cascade log in
// the report, and refuses a consumed below what the invocation and the
// sub-agents under it spent through the meter. It returns the
// sub-agents' invocations.
func (m *Meter) meteredReport(ctx context.Context, c *gateCall, req *agentwrite.ReportRequest) ([]string, *metering.Refusal) {
	rep := &req.Report
	m.settled(ctx, c.iss, "")
	t, err := m.invocationTotals(ctx, c.iss, rep.Invocation)
	if err != nil {
		return nil, unavailable("the store", err)
	}
	t.Login, t.Agent = c.login.name, rep.Agent // the opening's, also before a call
	rc := m.signReceipt(c.repo.name, c.n, rep.Invocation, t)
	rep.Receipt, rep.Speaker = &rc, c.login.name
	tree, err := m.o.Store.Tree(ctx, c.iss)
	if err != nil {
		return nil, unavailable("the store", err)
	}
	var subtree []string
	total := t.Tokens
	for _, b := range descendants(tree, rep.Invocation) {
		rep.Cascade = append(rep.Cascade, handoff.Spawned{Invocation: b.Invocation, Parent: b.Parent, Agent: b.Agent, Depth: b.Depth,
			Estimate: b.Estimate, Charged: b.Tokens, Calls: b.Calls})
		subtree = append(subtree, b.Invocation)
		total += b.Tokens
	}
	if rep.Consumed < total {
		return nil, &metering.Refusal{Status: 422, Kind: metering.KindPermission, Rule: "consumption-under-reported", Message: fmt.Sprintf(
			"consumed %d is below the %d tokens invocation %s and its %d sub-agents spent through the meter: report at least %d; nothing was written",
			rep.Consumed, total, rep.Invocation, len(subtree), total)}
	}
	return subtree, nil
}

// descendants are the branches under inv, in the tree's order.
func descendants(tree []meterstore.Branch, inv string) []meterstore.Branch {
	under := map[string]bool{inv: true}
	var out []meterstore.Branch
	for _, b := range tree { // oldest first: a parent comes before its children
		if under[b.Parent] {
			under[b.Invocation] = true
			out = append(out, b)
		}
	}
	return out
}
