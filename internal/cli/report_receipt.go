package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/dashboard"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/meter"
	"github.com/gns-guard/gns-guard/internal/receipt"
)

// receiptTimeout bounds the request for a receipt.
const receiptTimeout = 30 * time.Second

// meterClient reaches the meter; tests replace it.
var meterClient = &http.Client{Timeout: receiptTimeout}

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
	rc, err := getReceipt(ctx, base, o.owner, o.name, o.issue, o.rep.Invocation, token)
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

// getReceipt is one GET of the meter's receipt.
func getReceipt(ctx context.Context, base, owner, name string, n int64, inv, token string) (*receipt.Receipt, error) {
	u := fmt.Sprintf("%s/%s/%s/issues/%d/invocations/%s/receipt", strings.TrimRight(base, "/"), url.PathEscape(owner), url.PathEscape(name), n, url.PathEscape(inv))
	ctx, cancel := context.WithTimeout(ctx, receiptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := meterClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("could not reach the meter: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the meter answered HTTP %d: %s", resp.StatusCode, oneLine(string(data)))
	}
	var rc receipt.Receipt
	if err := json.Unmarshal(data, &rc); err != nil || rc.Sig == "" {
		return nil, fmt.Errorf("the meter's answer is not a receipt")
	}
	return &rc, nil
}

// fillMetered puts the meter's totals next to each row of status, when a
// meter is configured; a meter that cannot answer is a note on standard
// error, never a failure of status.
func fillMetered(ctx context.Context, env Env, base, owner, name, token string, res *dashboard.Result) {
	if base == "" {
		return
	}
	u := fmt.Sprintf("%s/%s/%s/metered", strings.TrimRight(base, "/"), url.PathEscape(owner), url.PathEscape(name))
	ctx, cancel := context.WithTimeout(ctx, receiptTimeout)
	defer cancel()
	var rows []meter.IssueMetered
	err := func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := meterClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		return json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&rows)
	}()
	if err != nil {
		fmt.Fprintf(env.Stderr, "gns-guard: status: the meter at %s did not say what it metered: %v\n", base, err)
		return
	}
	by := map[int64]meter.IssueMetered{}
	for _, r := range rows {
		by[r.Issue] = r
	}
	for i := range res.Rows {
		m := by[res.Rows[i].Number]
		res.Rows[i].Metered = &dashboard.Metered{Calls: m.Calls, Tokens: m.Tokens, Cost: m.Cost}
	}
}
