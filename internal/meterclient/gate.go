package meterclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/gns-guard/gns-guard/internal/handoff"
)

// GateReport is report's request to the gate (docs/gate.md#report): what
// the agent did and what comes next, as the report verb's flags say it.
type GateReport struct {
	Agent        string   `json:"agent"`
	Invocation   string   `json:"invocation"`
	Action       string   `json:"action"`
	Consumed     int64    `json:"consumed"`
	Status       string   `json:"status"`
	Verdict      string   `json:"verdict,omitempty"`
	FilesChanged int64    `json:"files_changed,omitempty"`
	KeyStats     string   `json:"key_stats,omitempty"`
	NextAgent    string   `json:"next_agent,omitempty"`
	NextEstimate int64    `json:"next_estimated_tokens,omitempty"`
	Result       string   `json:"result,omitempty"`
	Phase        string   `json:"phase,omitempty"`
	Depth        *int64   `json:"depth,omitempty"`
	LabelsAdd    []string `json:"labels_add,omitempty"`
	LabelsRemove []string `json:"labels_remove,omitempty"`
	Assignee     *string  `json:"assignee,omitempty"`
	CurrentTask  *string  `json:"current_task,omitempty"`
	DryRun       bool     `json:"dry_run,omitempty"`
}

// GateReportOf is r as the gate takes it.
func GateReportOf(r handoff.Report, dryRun bool) GateReport {
	return GateReport{Agent: r.Agent, Invocation: r.Invocation, Action: r.Action, Consumed: r.Consumed, Status: r.Status, Verdict: r.Verdict,
		FilesChanged: r.FilesChanged, KeyStats: r.KeyStats, NextAgent: r.NextAgent, NextEstimate: r.NextEstimate, Result: r.Result,
		Phase: r.Phase, Depth: r.Depth, LabelsAdd: r.LabelsAdd, LabelsRemove: r.LabelsRemove, Assignee: r.Assignee, CurrentTask: r.CurrentTask,
		DryRun: dryRun}
}

// Report is g as the report verb holds it.
func (g GateReport) Report() handoff.Report {
	return handoff.Report{Agent: g.Agent, Invocation: g.Invocation, Action: g.Action, Consumed: g.Consumed, Status: g.Status, Verdict: g.Verdict,
		FilesChanged: g.FilesChanged, KeyStats: g.KeyStats, NextAgent: g.NextAgent, NextEstimate: g.NextEstimate, Result: g.Result,
		Phase: g.Phase, Depth: g.Depth, LabelsAdd: g.LabelsAdd, LabelsRemove: g.LabelsRemove, Assignee: g.Assignee, CurrentTask: g.CurrentTask}
}

// GateSpawn asks the gate for an invocation: a root (no Parent) for the
// agent itself, or a sub-agent under Parent (docs/gate.md#spawn).
type GateSpawn struct {
	Parent   string `json:"parent,omitempty"`
	Agent    string `json:"agent"`
	Estimate int64  `json:"estimate"`
}

// GateSpawned is the invocation the gate opened.
type GateSpawned struct {
	Invocation string `json:"invocation"`
	Parent     string `json:"parent,omitempty"`
	Agent      string `json:"agent"`
	Login      string `json:"login"`
	Depth      int64  `json:"depth"`
	Estimate   int64  `json:"estimate"`
	// Remaining is what the issue's budget holds after metered spend.
	Remaining int64 `json:"remaining"`
	// BaseURLs are the providers' base URLs for the invocation's calls.
	BaseURLs map[string]string `json:"base_urls"`
}

// GateRefusal is the gate's answer to a request it refused or could not
// serve: the rule, as the guard names it, and what to do.
type GateRefusal struct {
	Status  int    `json:"-"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

func (r *GateRefusal) Error() string { return r.Message + " [" + r.Rule + "]" }

// GatePath is the gate's path of an issue's verb.
func GatePath(owner, name string, n int64, verb string) string {
	return fmt.Sprintf("%s/%s/issues/%d/gate/%s", url.PathEscape(owner), url.PathEscape(name), n, verb)
}

// Spawn asks the gate to open an invocation; a refusal is a *GateRefusal.
func (c Client) Spawn(ctx context.Context, owner, name string, n int64, sp GateSpawn) (GateSpawned, error) {
	var out GateSpawned
	data, err := c.post(ctx, GatePath(owner, name, n, "spawn"), sp)
	if err != nil {
		return out, err
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return out, fmt.Errorf("the gate's answer is not an invocation: %v", err)
	}
	return out, nil
}

// Report sends a report; the answer is report's result as JSON, also
// when refused (a *GateRefusal with Rule "refused" and the result).
func (c Client) Report(ctx context.Context, owner, name string, n int64, rep GateReport) ([]byte, error) {
	return c.post(ctx, GatePath(owner, name, n, "report"), rep)
}

// RefusedReport is the rule of a report the guard would fail: the
// answer still holds report's result, its findings.
const RefusedReport = "report-refused"

// post sends v as JSON; an answer other than 200 or 201 is a
// *GateRefusal, whose body a refused report still returns.
func (c Client) post(ctx context.Context, path string, v any) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout*2)
	defer cancel()
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.Base, "/")+"/"+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Content-Type", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: Timeout * 2}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("could not reach the gate: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("could not read the gate's answer: %w", err)
	}
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusCreated {
		return data, nil
	}
	ref := &GateRefusal{Status: resp.StatusCode}
	if json.Unmarshal(data, &struct {
		Error *GateRefusal `json:"error"`
	}{ref}) != nil || ref.Rule == "" {
		ref.Rule, ref.Message = "gate-unavailable", fmt.Sprintf("the gate answered HTTP %d: %s", resp.StatusCode, oneLine(string(data)))
	}
	return data, ref
}

// GateSubIssue asks the gate for a sub-issue under an invocation of the
// issue the caller holds (docs/gate.md#sub-issues).
type GateSubIssue struct {
	Invocation string `json:"invocation"`
	Agent      string `json:"agent"`
	Title      string `json:"title"`
	Task       string `json:"task"`
	Budget     int64  `json:"budget"`
	Estimate   int64  `json:"estimate"`
}

// GateSubIssued is the sub-issue the gate opened.
type GateSubIssued struct {
	Issue int64 `json:"issue"`
	// Invocation is the opening in the parent's tree.
	Invocation string   `json:"invocation"`
	Depth      int64    `json:"depth"`
	Budget     int64    `json:"budget"`
	Labels     []string `json:"labels"`
}
