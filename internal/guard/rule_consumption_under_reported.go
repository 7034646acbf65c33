package guard

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gns-guard/gns-guard/internal/agentcomment"
	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/receipt"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// RuleUnderReported: a report's rise is below the result comment's or the
// receipt's tokens.
const RuleUnderReported = "consumption-under-reported"

// checkUnderReport counts each agent result exactly and compares it with the
// rise of budget.consumed its report brought. The rise comes from what the
// guard accepted: the burn series, else the checkpoint over the ledger, else
// the footer. under-report sets the severity; a rise below a valid meter
// receipt is always a violation (docs/meter.md#receipts).
func checkUnderReport(e *decision) (out []Violation) {
	for _, r := range e.resultComments() {
		f := r.footer
		if f.Budget == nil || f.Budget.Consumed == nil {
			continue // comment-protocol reports the missing footer
		}
		rise, from := e.reportRise(f)
		rc, err := e.receiptOf(r)
		if err == nil {
			n := &e.plan.Numbers
			n.Metered, n.MeteredReported, n.MeteredResults = n.Metered+rc.Tokens, n.MeteredReported+rise, n.MeteredResults+1
		}
		if err == nil && rise < rc.Tokens {
			v := at(checkpoint.Pos{Line: 1, Col: 1}, r.path(), "comment #%d of agent %s: its report added %s tokens to budget.consumed "+
				"(%s), less than the %s tokens the meter counted for invocation %s in %d calls (its signed receipt): report at least the metered total",
				r.c.ID, markdown.Quote(f.Agent), tokens.Format(rise), from, tokens.Format(rc.Tokens), markdown.Quote(f.Invocation), rc.Calls)
			e.link(r)
			out = append(out, v)
			continue
		}
		if v, ok := e.floorCheck(r, rise, from); ok {
			out = append(out, v)
		}
	}
	return append(out, checkMeteredTotal(e)...)
}

// floorCheck is the floor under-report sets: the comment's own tokens.
func (e *decision) floorCheck(r resultComment, rise int64, from string) (Violation, bool) {
	if e.cfg.UnderReport == "off" || e.in.Counter == nil {
		return Violation{}, false
	}
	held := int64(e.in.Counter.Count(r.c.Body))
	if held <= rise {
		return Violation{}, false
	}
	v := at(checkpoint.Pos{Line: 1, Col: 1}, r.path(), "comment #%d of agent %s holds %s tokens (%s), more than the %s tokens its "+
		"report added to budget.consumed (%s): its output alone is more than it says it spent",
		r.c.ID, markdown.Quote(r.footer.Agent), tokens.Format(held), e.in.Counter.Encoding(), tokens.Format(rise), from)
	v.Severity = finding.Warning
	if e.cfg.UnderReport == "fail" {
		v.Severity = finding.Error
	}
	e.link(r)
	return v, true
}

// resultComment is an agent's result comment with its footer.
type resultComment struct {
	c      issues.Comment
	footer *agentcomment.Footer
}

// path is where findings about the comment point.
func (r resultComment) path() string { return fmt.Sprintf("comment#%d", r.c.ID) }

// resultComments are the agent comments with a footer among the recent
// comments and the event's own, each once, the guard's own left out, and
// those whose author may not speak as the agent they claim
// (docs/ledger.md#what-the-next-agent-reads): they count as nobody's.
func (e *decision) resultComments() (out []resultComment) {
	seen := map[int64]bool{}
	cs := e.in.Recent
	if c := e.eventComment(); c != nil {
		cs = append(cs[:len(cs):len(cs)], *c)
	}
	for _, c := range cs {
		if seen[c.ID] || c.TooLarge || (e.in.Self != "" && c.Author == e.in.Self) || !agentcomment.IsAgentComment(c.Body) || !e.speaks(c) {
			continue
		}
		seen[c.ID] = true
		parsed, _ := agentcomment.Parse(c.Body)
		if parsed.Footer != nil {
			out = append(out, resultComment{c: c, footer: parsed.Footer})
		}
	}
	return out
}

// link keeps the comment's address for the status comment's findings.
func (e *decision) link(r resultComment) { e.linkComment(r.path(), r.c.HTMLURL) }

// receiptOf verifies the footer's receipt against meter-public-key, issue
// and invocation.
func (e *decision) receiptOf(r resultComment) (*receipt.Receipt, error) {
	if e.cfg.MeterPublicKey == "" {
		return nil, errors.New("meter-public-key is not set")
	}
	if len(r.footer.Metered) == 0 || string(r.footer.Metered) == "null" {
		return nil, errNoReceipt
	}
	var rc receipt.Receipt
	if err := json.Unmarshal(r.footer.Metered, &rc); err != nil {
		return nil, fmt.Errorf("GNS_EVENT.metered is not a receipt: %v", err)
	}
	if err := receipt.Verify(&rc, e.cfg.MeterPublicKey, receipt.For{Repo: e.in.Repo, Issue: e.in.Issue.Number,
		Invocation: r.footer.Invocation}); err != nil {
		return nil, err
	}
	return &rc, nil
}

// errNoReceipt is a footer with no receipt.
var errNoReceipt = errors.New("its footer carries no meter receipt")

// reportRise is the report's rise of budget.consumed, and its source.
func (e *decision) reportRise(f *agentcomment.Footer) (int64, string) {
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

// ledgerHolds: does the burn series end with inv?
func (e *decision) ledgerHolds(inv string) bool {
	l := e.trust.ledger
	return l != nil && len(l.Burn) > 0 && l.Burn[len(l.Burn)-1].Invocation == inv
}
