package guard

import (
	"errors"
	"slices"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// RuleUnmetered: no valid receipt for a result, under metering: required.
const RuleUnmetered = "consumption-unmetered"

// checkUnmetered fails, with metering: required, each agent result without a
// receipt that verifies for this issue and invocation, unless the record
// accepted it already: turning metering on holds new results only. With
// metering off a bad receipt is a warning, and the token floor of
// consumption-under-reported stands.
func checkUnmetered(e *decision) (out []Violation) {
	required := e.cfg.Metering == "required"
	for _, r := range e.resultComments() {
		if r.footer.EventType != "subagent_result" || e.accepted(r.c.ID, r.c.Body) {
			continue
		}
		_, err := e.receiptOf(r)
		if err == nil || (!required && errors.Is(err, errNoReceipt)) || (!required && e.cfg.MeterPublicKey == "") {
			continue
		}
		v := at(checkpoint.Pos{Line: 1, Col: 1}, r.path(), "comment #%d of agent %s (invocation %s) has no valid meter receipt: %v",
			r.c.ID, markdown.Quote(r.footer.Agent), markdown.Quote(r.footer.Invocation), err)
		if required {
			v.Message += "; metering: required: the agent spends through gns-guard meter and reports with meter-url set, so report carries the receipt"
		} else {
			v.Message += "; the receipt is ignored"
			v.Severity = finding.Warning
		}
		e.link(r)
		out = append(out, v)
	}
	return append(out, checkMeteredUnreported(e)...)
}

// accepted reports whether the record accepted id with this body
// (docs/ledger.md#accepted-results).
func (e *decision) accepted(id int64, body string) bool {
	l := e.trust.ledger
	if l == nil {
		return false
	}
	d := ledger.ResultDigest(body)
	return slices.ContainsFunc(l.Results, func(r ledger.ResultRef) bool { return r.ID == id && r.Digest == d })
}
