package guard

import (
	"fmt"

	"github.com/gns-guard/gns-guard/internal/agentcomment"
	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// RuleUnderReported is an agent whose result comment alone holds more
// tokens than the rise of budget.consumed its report brought.
const RuleUnderReported = "consumption-under-reported"

// checkUnderReport counts, exactly and in the configured encoding, every
// agent result comment among the issue's recent comments, and compares the
// count with what its report added to budget.consumed. That rise is taken
// from what the guard accepted, not from what the agent says: the ledger's
// burn series when it holds the report's invocation (the rise from the
// state before it), else the checkpoint's rise over the ledger when the
// checkpoint names the report's invocation as its last, else — the
// checkpoint not patched yet — the footer's budget.consumed. Severity comes
// from under-report: warn (a warning), fail (a violation) or off.
func checkUnderReport(e *eval) (out []Violation) {
	if e.cfg.UnderReport == "off" || e.in.Counter == nil {
		return nil
	}
	sev := finding.Warning
	if e.cfg.UnderReport == "fail" {
		sev = finding.Error
	}
	seen := map[int64]bool{}
	cs := e.in.Recent
	if c := e.eventComment(); c != nil {
		cs = append(cs[:len(cs):len(cs)], *c)
	}
	for _, c := range cs {
		if seen[c.ID] || c.TooLarge || (e.in.Self != "" && c.Author == e.in.Self) || !agentcomment.IsAgentComment(c.Body) {
			continue
		}
		seen[c.ID] = true
		parsed, _ := agentcomment.Parse(c.Body)
		f := parsed.Footer
		if f == nil || f.Budget == nil || f.Budget.Consumed == nil {
			continue // comment-protocol reports the missing footer
		}
		rise, from := e.reportRise(f)
		held := int64(e.in.Counter.Count(c.Body))
		if held <= rise {
			continue
		}
		path := fmt.Sprintf("comment#%d", c.ID)
		v := at(checkpoint.Pos{Line: 1, Col: 1}, path, "comment #%d of agent %s holds %s tokens (%s), more than the %s tokens its report added to budget.consumed (%s): its output alone is more than it says it spent",
			c.ID, issues.Quote(f.Agent), tokens.Format(held), e.in.Counter.Encoding(), tokens.Format(rise), from)
		v.Severity = sev
		if c.HTMLURL != "" {
			if e.plan.Links == nil {
				e.plan.Links = map[string]string{}
			}
			e.plan.Links[path] = c.HTMLURL
		}
		out = append(out, v)
	}
	return out
}

// reportRise is the rise of budget.consumed an agent's report brought, and
// where the figure comes from (for the message).
func (e *eval) reportRise(f *agentcomment.Footer) (int64, string) {
	inv := ledger.InvocationTag(f.Invocation)
	if l := e.trust.ledger; l != nil && inv != "" {
		for i := len(l.Burn) - 1; i > 0; i-- {
			p, prev := l.Burn[i], l.Burn[i-1]
			if p.Invocation == inv && p.Agent != "" && p.Consumed >= prev.Consumed {
				return p.Consumed - prev.Consumed, fmt.Sprintf("the guard's ledger: %s → %s", tokens.Format(prev.Consumed), tokens.Format(p.Consumed))
			}
		}
	}
	if l := e.trust.ledger; l != nil && l.Baseline && e.cp != nil && inv != "" && e.cp.LastInvocation.Value == f.Invocation &&
		e.cp.Phase.Value == l.Phase && e.cp.Budget.Consumed.Value >= l.Consumed && !e.ledgerHolds(inv) &&
		(len(l.Burn) > 0 || e.cp.Budget.Consumed.Value > l.Consumed) {
		c := e.cp.Budget.Consumed.Value
		return c - l.Consumed, fmt.Sprintf("the checkpoint over the guard's ledger: %s → %s", tokens.Format(l.Consumed), tokens.Format(c))
	}
	return *f.Budget.Consumed, "its footer's budget.consumed"
}

// ledgerHolds reports whether the ledger's burn series already ends with
// the report of invocation inv (then the ledger's consumed includes it).
func (e *eval) ledgerHolds(inv string) bool {
	l := e.trust.ledger
	return l != nil && len(l.Burn) > 0 && l.Burn[len(l.Burn)-1].Invocation == inv
}
