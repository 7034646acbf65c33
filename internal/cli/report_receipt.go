package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/dashboard"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/meterclient"
)

// openInvocation takes, when --invocation is not given, the invocation
// the meter at meter-url opened for the token's calls that named none
// (docs/meter.md#one-configuration-kilo-or-any-openai-sdk). Without a
// meter, or when it opened none, --invocation is required: it makes a
// re-run safe.
func (o *reportOptions) openInvocation(ctx context.Context, conn *reportConn, env Env, res *reportResult) error {
	if strings.TrimSpace(o.rep.Invocation) != "" {
		return nil
	}
	base := conn.cfg.MeterURL
	if base == "" {
		return usageError("report: --invocation ID is required: it makes a re-run safe (with meter-url set, the meter names the invocation its calls opened)")
	}
	token, _ := tokenFrom(o.token, env)
	cur, err := meterclient.Client{Base: base, Token: token}.Current(ctx, o.owner, o.name, o.issue)
	if err != nil {
		return usageError("report: no --invocation, and the meter at %s names none: %v; pass --invocation ID", base, err)
	}
	o.rep.Invocation = cur.Invocation
	res.Notes = append(res.Notes, fmt.Sprintf("invocation %s: the one the meter opened for this token's calls on the issue", cur.Invocation))
	return nil
}

// fetchReceipt asks the meter at meter-url for the invocation's signed
// receipt, with the agent's own token (docs/meter.md#receipts). Without a
// receipt, a report under metering: required could not run (exit 3);
// otherwise the report goes on, and a note says why there is none.
func (o *reportOptions) fetchReceipt(ctx context.Context, conn *reportConn, env Env, res *reportResult) error {
	base := conn.cfg.MeterURL
	if base == "" {
		return nil
	}
	token, _ := tokenFrom(o.token, env)
	rc, err := meterclient.Client{Base: base, Token: token}.Receipt(ctx, o.owner, o.name, o.issue, o.rep.Invocation)
	if err == nil {
		o.rep.Receipt = rc
		res.Notes = append(res.Notes, fmt.Sprintf("the meter counted %d tokens in %d calls for invocation %s; its signed receipt is in the footer", rc.Tokens, rc.Calls, o.rep.Invocation))
		if o.rep.Consumed < rc.Tokens {
			res.Notes = append(res.Notes, fmt.Sprintf("--consumed %d is below the %d tokens metered: the guard fails consumption-under-reported", o.rep.Consumed, rc.Tokens))
		}
		return nil
	}
	if conn.cfg.Metering == "required" {
		return &exitcode.CannotRunError{Err: fmt.Errorf("report: metering: required, and the meter at %s gave no receipt for invocation %s: %v; nothing was written", base, o.rep.Invocation, err)}
	}
	res.Notes = append(res.Notes, fmt.Sprintf("no meter receipt in the footer: %v", err))
	return nil
}

// fillMetered puts the meter's totals next to each row of status, when a
// meter is configured; a meter that cannot answer is a note on standard
// error, never a failure of status.
func fillMetered(ctx context.Context, env Env, base, owner, name, token string, res *dashboard.Result) {
	if base == "" {
		return
	}
	rows, err := meterclient.Client{Base: base, Token: token}.Issues(ctx, owner, name)
	if err != nil {
		fmt.Fprintf(env.Stderr, "gns-guard: status: the meter at %s did not say what it metered: %v\n", base, err)
		return
	}
	by := map[int64]meterclient.IssueMetered{}
	for _, r := range rows {
		by[r.Issue] = r
	}
	for i := range res.Rows {
		m := by[res.Rows[i].Number]
		res.Rows[i].Metered = &dashboard.Metered{Calls: m.Calls, Tokens: m.Tokens, Cost: m.Cost}
	}
}
