package cli

import (
	"context"
	"fmt"

	"github.com/gns-guard/gns-guard/internal/dashboard"
	"github.com/gns-guard/gns-guard/internal/meterclient"
)

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
