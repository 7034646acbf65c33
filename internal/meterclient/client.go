// Package meterclient asks gns-guard meter what it counted: an
// invocation's signed receipt (for report), an issue's signed statement
// (for the guard's run), every issue's totals (for status) and the
// invocations the gate opened on an issue, each one GET with the asker's
// Gitea token (docs/meter.md).
package meterclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/receipt"
)

// Timeout bounds every request.
const Timeout = 30 * time.Second

// Client reaches the meter at Base with Token.
type Client struct {
	Base, Token string
	// HTTP is the client to use (nil: one with Timeout).
	HTTP *http.Client
}

// Receipt is for invocation inv of issue n.
func (c Client) Receipt(ctx context.Context, owner, name string, n int64, inv string) (*receipt.Receipt, error) {
	var rc receipt.Receipt
	path := fmt.Sprintf("%s/%s/issues/%d/invocations/%s/receipt", url.PathEscape(owner), url.PathEscape(name), n, url.PathEscape(inv))
	if err := c.get(ctx, path, 64<<10, &rc); err != nil {
		return nil, err
	}
	if rc.Sig == "" {
		return nil, fmt.Errorf("the meter's answer is not a receipt")
	}
	return &rc, nil
}

// Statement is the signed statement of issue n's metered spend.
func (c Client) Statement(ctx context.Context, owner, name string, n int64) (*receipt.Statement, error) {
	var st receipt.Statement
	if err := c.get(ctx, fmt.Sprintf("%s/%s/issues/%d/metered", url.PathEscape(owner), url.PathEscape(name), n), 4<<20, &st); err != nil {
		return nil, err
	}
	if st.Sig == "" {
		return nil, fmt.Errorf("the meter's answer is not a signed statement")
	}
	return &st, nil
}

// IssueMetered is one issue's line of GET /OWNER/NAME/metered.
type IssueMetered struct {
	Issue  int64 `json:"issue"`
	Calls  int64 `json:"calls"`
	Tokens int64 `json:"tokens"`
	Cost   int64 `json:"cost_micro_usd"`
}

// Issues are the totals of every issue of the repository.
func (c Client) Issues(ctx context.Context, owner, name string) ([]IssueMetered, error) {
	var rows []IssueMetered
	err := c.get(ctx, fmt.Sprintf("%s/%s/metered", url.PathEscape(owner), url.PathEscape(name)), 16<<20, &rows)
	return rows, err
}

// get decodes one GET below Base into out.
func (c Client) get(ctx context.Context, path string, limit int64, out any) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.Base, "/")+"/"+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: Timeout}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("could not reach the meter: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return fmt.Errorf("could not read the meter's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the meter answered HTTP %d: %s", resp.StatusCode, oneLine(string(data)))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("the meter's answer is not what it sends: %v", err)
	}
	return nil
}

// oneLine clips the meter's answer to one line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// About is what a meter says of itself at GET /about: the server it
// serves, the owners and repositories its provider keys pay for, and the
// public key of its receipts.
type About struct {
	Server    string   `json:"server"`
	Scope     []string `json:"scope"`
	PublicKey string   `json:"public_key"`
	// Gate says the meter also serves the gate (docs/gate.md).
	Gate bool `json:"gate,omitempty"`
}

// Serves says the scope holds repository owner/name (letter case as
// Gitea ignores it): its owner, or the repository itself. An empty scope
// serves every repository.
func (a About) Serves(owner, name string) bool {
	if len(a.Scope) == 0 {
		return true
	}
	for _, sc := range a.Scope {
		o, n, whole := strings.Cut(sc, "/")
		if strings.EqualFold(o, owner) && (!whole || strings.EqualFold(n, name)) {
			return true
		}
	}
	return false
}

// About needs no token.
func (c Client) About(ctx context.Context) (About, error) {
	var a About
	err := c.get(ctx, "about", 64<<10, &a)
	return a, err
}

// Current is the meter's invocation for unnamed calls, and if recorded.
type Current struct {
	Invocation string `json:"invocation"`
	Reported   bool   `json:"reported"`
}

// Current asks for the token login's invocation on issue n.
func (c Client) Current(ctx context.Context, owner, name string, n int64) (Current, error) {
	var cur Current
	err := c.get(ctx, fmt.Sprintf("%s/%s/issues/%d/invocations/current", url.PathEscape(owner), url.PathEscape(name), n), 64<<10, &cur)
	return cur, err
}

// Tree is GET /OWNER/NAME/issues/N/invocations: the invocations the gate
// opened on an issue, oldest first (docs/meter.md#in-the-gated-posture).
type Tree struct {
	Repo        string   `json:"repo"`
	Issue       int64    `json:"issue"`
	Invocations []Branch `json:"invocations"`
}

// Branch is one opened invocation and what the meter charged it: tokens
// (calls in flight at their worst case), calls, calls in flight, and cost
// in millionths of a dollar. Parent is empty for a root.
type Branch struct {
	Invocation string    `json:"invocation"`
	Parent     string    `json:"parent"`
	Agent      string    `json:"agent"`
	Login      string    `json:"login"`
	Depth      int64     `json:"depth"`
	Estimate   int64     `json:"estimate"`
	Opened     time.Time `json:"opened"`
	Tokens     int64     `json:"tokens"`
	Calls      int64     `json:"calls"`
	InFlight   int64     `json:"in_flight"`
	Cost       int64     `json:"cost_micro_usd"`
}

// Tree asks for the invocations the gate opened on issue n of repo,
// OWNER/NAME.
func (c Client) Tree(ctx context.Context, repo string, n int64) (Tree, error) {
	var tr Tree
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return tr, fmt.Errorf("the repository %q is not OWNER/NAME", repo)
	}
	err := c.get(ctx, fmt.Sprintf("%s/%s/issues/%d/invocations", url.PathEscape(owner), url.PathEscape(name), n), 16<<20, &tr)
	return tr, err
}
