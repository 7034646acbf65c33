package metering

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// Pending is an issue's spend not yet in its checkpoint: invocations it
// does not record, and calls in flight at their worst. Cost is the whole
// metered cost, in flight included. Recorded is what recorded invocations
// had spent when first seen recorded.
type Pending struct {
	Tokens   int64
	Cost     int64
	Recorded int64
}

// Unheld is the spend budget.consumed does not hold: what is pending, and
// what recorded invocations spent beyond consumed's rise since the meter
// first saw the issue. The meter's count is that rise's floor
// (docs/meter.md#before-a-call).
func (p Pending) Unheld(st Standing) int64 {
	return p.Tokens + max(p.Recorded-(st.Consumed-st.Base), 0)
}

// The meter's defaults, which its command line shows.
const (
	// DefaultIssueTTL is how long an issue's reading is kept.
	DefaultIssueTTL = 2 * time.Second
	// DefaultMaxTokens caps an answer the request leaves uncapped.
	DefaultMaxTokens = 4096
	// DefaultHangupRead is how long an answer is still read after its
	// client hangs up: the official SDKs' call timeout.
	DefaultHangupRead = 10 * time.Minute
)

// Resume tells a budget refusal how the issue's chain resumes.
const Resume = "The issue waits for an approver: a person in budget-admins raises budget.total in the checkpoint " +
	"(and removes budget::exhausted when the guard set it); the next call is then admitted within seconds, with nothing to restart"

// Money is admission's prices: the model's, and the issue's cap in
// millionths of a dollar (0: none).
type Money struct {
	Price    config.Price
	HasPrice bool
	Cap      int64
}

// Admit refuses c when st refuses, or when p plus c's worst case would
// pass the remaining budget or the money cap.
func Admit(st Standing, p Pending, c Call, m Money) *Refusal {
	if st.Refusal != nil {
		return st.Refusal
	}
	unheld := p.Unheld(st)
	left := st.Remaining - unheld
	if unheld+c.Worst() > st.Remaining {
		return &Refusal{Status: 403, Kind: KindBudget, Rule: "meter-over-budget", Message: fmt.Sprintf(
			"this call could spend %s tokens (%s of input%s, at most %s of output), more than the %s the issue's budget has left "+
				"(remaining %s of %s in the checkpoint, %s metered and not in budget.consumed): "+
				"lower max_tokens or the input, or report what was spent (gns-guard report). "+Resume,
			tokens.Format(c.Worst()), tokens.Format(c.Input), exactness(c), tokens.Format(c.Output),
			tokens.Format(max(left, 0)), tokens.Format(st.Remaining), tokens.Format(st.Total), tokens.Format(unheld))}
	}
	if m.Cap <= 0 {
		return nil
	}
	if !m.HasPrice {
		return &Refusal{Status: 403, Kind: KindBudget, Rule: "meter-money-cap", Message: fmt.Sprintf(
			"money-cap is set but prices has no price for model %q, so the call's cost cannot be bounded: "+
				"add the model to prices in .gitea/gns-guard.yml", clip(c.Model, 80))}
	}
	worst := WorstCost(c, m.Price)
	if p.Cost+worst > m.Cap {
		return &Refusal{Status: 403, Kind: KindBudget, Rule: "meter-money-cap", Message: fmt.Sprintf(
			"this call could cost %s, and the issue has spent %s of its money-cap %s: ask a person to raise money-cap",
			Dollars(worst), Dollars(p.Cost), Dollars(m.Cap))}
	}
	return nil
}

func exactness(c Call) string {
	if c.Exact {
		return ", counted exactly"
	}
	return ", bounded by its bytes"
}

// Cost is u's cost in millionths of a dollar: price per million tokens
// times tokens.
func Cost(u Usage, p config.Price) int64 {
	fresh := max(u.Input-u.Cached, 0)
	return int64(float64(fresh)*p.Input + float64(u.Cached)*p.Cached + float64(u.Output)*p.Output + 0.5)
}

// WorstCost is a call's cost with no input cached.
func WorstCost(c Call, p config.Price) int64 {
	return Cost(Usage{Input: c.Input, Output: c.Output}, p)
}

// Dollars shows millionths of a dollar as dollars.
func Dollars(micro int64) string {
	return "$" + strconv.FormatFloat(float64(micro)/1e6, 'f', 4, 64)
}

// Header names of the budget every answer carries.
const (
	HeaderTotal     = "X-Gns-Budget-Total"
	HeaderRemaining = "X-Gns-Budget-Remaining"
	HeaderMetered   = "X-Gns-Budget-Metered"
	HeaderWarning   = "X-Gns-Budget-Warning"
)

// Headers are an answer's budget headers: total, remaining, metered and
// not reported, and a warning at 80, 90 and 95 % used.
func Headers(st Standing, p Pending) map[string]string {
	h := map[string]string{}
	if st.Refusal != nil {
		return h
	}
	unheld := p.Unheld(st)
	h[HeaderTotal] = strconv.FormatInt(st.Total, 10)
	h[HeaderRemaining] = strconv.FormatInt(st.Remaining-unheld, 10)
	h[HeaderMetered] = strconv.FormatInt(unheld, 10)
	if w := Warning(st, p); w != "" {
		h[HeaderWarning] = w
	}
	return h
}

// Warning says, at 80, 90 and 95 % of the budget used (consumed and
// metered), how much is used; "" below.
func Warning(st Standing, p Pending) string {
	used := st.Consumed + p.Unheld(st)
	step, ok := guard.BudgetStep(used, st.Total)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d%% of the budget used (%s of %s tokens): report, or ask a person for more", step, tokens.Format(used), tokens.Format(st.Total))
}
