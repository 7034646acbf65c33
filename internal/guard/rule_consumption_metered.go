package guard

import (
	"fmt"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/receipt"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// MeterRead is the signed statement, or why there is none
// (docs/meter.md#the-issues-metered-total).
type MeterRead struct {
	// URL is meter-url, for the messages.
	URL       string
	Statement *receipt.Statement
	// Err says why the meter could not be read.
	Err error
}

// statement is verified against meter-public-key; nil with why ("" when not
// asked).
func (e *decision) statement() (*receipt.Statement, string) {
	m := e.in.Meter
	switch {
	case m == nil || e.cfg.MeterPublicKey == "":
		return nil, ""
	case m.Err != nil:
		return nil, m.Err.Error()
	}
	if err := receipt.VerifyStatement(m.Statement, e.cfg.MeterPublicKey, e.in.Repo, e.in.Issue.Number); err != nil {
		return nil, err.Error()
	}
	return m.Statement, ""
}

// recordedInvocations are those in budget.consumed: the checkpoint's and the
// ledger's reports.
func (e *decision) recordedInvocations() map[string]bool {
	out := map[string]bool{}
	if e.cp != nil {
		if v := e.cp.LastInvocation.Value; v != "" {
			out[v] = true
		}
		for _, en := range e.cp.Entries() {
			if v := en.Invocation.Value; v != "" {
				out[v] = true
			}
		}
	}
	if st, _ := e.statement(); st != nil && e.trust.ledger != nil {
		tags := map[string]bool{}
		for _, p := range e.trust.ledger.Burn {
			tags[p.Invocation] = true
		}
		for _, l := range st.Invocations {
			if tags[ledger.InvocationTag(l.Invocation)] {
				out[l.Invocation] = true
			}
		}
	}
	return out
}

// checkMeteredTotal holds budget.consumed to the meter's count: its rise
// since the meter first read the issue is at least what the invocations
// the issue records spent through the meter, whatever invocation the
// checkpoint names last.
func checkMeteredTotal(e *decision) []Violation {
	st, _ := e.statement()
	if st == nil || !st.Seen || e.cp == nil || !e.cp.Budget.Consumed.Set {
		return nil
	}
	recorded := e.recordedInvocations()
	var sum int64
	var names []string
	for _, l := range st.Invocations {
		if recorded[l.Invocation] {
			sum += l.Tokens
			names = append(names, markdown.Quote(l.Invocation))
		}
	}
	c := e.cp.Budget.Consumed
	if rise := c.Value - st.Base; sum > rise {
		return []Violation{at(c.Pos, "budget.consumed", "budget.consumed is %s: it rose %s since the meter first read the issue (from "+
			"%s), less than the %s tokens the meter counted for the invocations the issue records (%s): report the metered spend",
			tokens.Format(c.Value), tokens.Format(rise), tokens.Format(st.Base), tokens.Format(sum), clipList(names))}
	}
	return nil
}

// checkMeteredUnreported finds unreported spend, unmetered results, and
// unread meters.
func checkMeteredUnreported(e *decision) []Violation {
	st, why := e.statement()
	if st == nil {
		if why == "" {
			return nil
		}
		v := at(checkpoint.Pos{Line: 1, Col: 1}, "meter-url", "the meter at %s could not be read: %s; the issue's metered total is not "+
			"judged in this run", e.in.Meter.URL, why)
		v.Severity = finding.Warning
		return []Violation{v}
	}
	out := e.orphanedSpend(st)
	if e.cfg.Metering != "required" {
		return out
	}
	for _, r := range e.resultComments() {
		if r.footer.EventType != "subagent_result" || e.accepted(r.c.ID, r.c.Body) || st.Of(r.footer.Invocation) != nil {
			continue
		}
		v := at(checkpoint.Pos{Line: 1, Col: 1}, r.path(), "comment #%d of agent %s reports invocation %s, which never called through "+
			"the meter: metering: required: an agent spends through the meter under the invocation it reports",
			r.c.ID, markdown.Quote(r.footer.Agent), markdown.Quote(r.footer.Invocation))
		e.link(r)
		out = append(out, v)
	}
	return out
}

// orphanedSpend is the spend of the invocations no result reports and the
// issue does not record, once a result was reported well after their last
// call (ClockSlack: the meter's clock and Gitea's may differ): an
// invocation still calling, or the one working now, is in flight. A
// violation with metering: required, else a warning.
func (e *decision) orphanedSpend(st *receipt.Statement) (out []Violation) {
	recorded := e.recordedInvocations()
	for _, r := range e.resultComments() {
		recorded[r.footer.Invocation] = true
	}
	latest := e.latestReport()
	for _, l := range st.Invocations {
		if recorded[l.Invocation] || l.Tokens == 0 || l.InFlight > 0 || latest.IsZero() || !time.Unix(l.Last, 0).Add(ClockSlack).Before(latest) {
			continue
		}
		v := at(checkpoint.Pos{Line: 1, Col: 1}, "meter-url", "invocation %s (login %s) spent %s tokens through the meter in %d calls, "+
			"the last at %s, and no result reports it though results came after: report it (gns-guard report --invocation %s), or its "+
			"spend stays outside budget.consumed",
			markdown.Quote(l.Invocation), markdown.Quote(l.Login), tokens.Format(l.Tokens), l.Calls,
			time.Unix(l.Last, 0).UTC().Format(time.RFC3339), markdown.Quote(l.Invocation))
		if e.cfg.Metering != "required" {
			v.Severity = finding.Warning
		}
		out = append(out, v)
	}
	return out
}

// ClockSlack is the meter-Gitea clock drift allowed; spend within it is in
// flight.
const ClockSlack = 10 * time.Minute

// latestReport: the ledger's last burn point, or the newest result read.
func (e *decision) latestReport() time.Time {
	var t time.Time
	if l := e.trust.ledger; l != nil && len(l.Burn) > 0 {
		t = time.Unix(l.Burn[len(l.Burn)-1].T, 0)
	}
	for _, r := range e.resultComments() {
		if r.c.CreatedAt.After(t) {
			t = r.c.CreatedAt
		}
	}
	return t
}

// clipList names at most five items, and how many more.
func clipList(items []string) string {
	if len(items) <= 5 {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:5], ", ") + fmt.Sprintf(" and %d more", len(items)-5)
}
