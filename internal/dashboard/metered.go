package dashboard

import (
	"context"

	"github.com/gns-guard/gns-guard/internal/meterclient"
)

// FillMetered puts the meter's totals next to each row, asking the meter
// at base with token. A meter that cannot answer leaves the rows as they
// are.
func FillMetered(ctx context.Context, base, token, owner, name string, res *Result) error {
	rows, err := meterclient.Client{Base: base, Token: token}.Issues(ctx, owner, name)
	if err != nil {
		return err
	}
	by := map[int64]meterclient.IssueMetered{}
	for _, r := range rows {
		by[r.Issue] = r
	}
	for i := range res.Rows {
		m := by[res.Rows[i].Number]
		res.Rows[i].Metered = &Metered{Calls: m.Calls, Tokens: m.Tokens, Cost: m.Cost}
	}
	return nil
}
