package briefing

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/gns-guard/gns-guard/internal/entryload"
	"github.com/gns-guard/gns-guard/internal/fence"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// CostCheckRatio is the protocol's cost check: it warns when the planned
// load exceeds this share of the available tokens.
const CostCheckRatio = 0.3

// Report is the JSON form of a briefing, or of a refusal to brief
// (OverCapError).
type Report struct {
	Fits bool `json:"fits"`
	*entryload.Load
	CurrentTask string          `json:"current_task"`
	CostCheck   *CostCheck      `json:"cost_check,omitempty"`
	Next        *guard.Room     `json:"next_estimate,omitempty"`
	Error       string          `json:"error,omitempty"`
	OverCap     *OverCapNumbers `json:"over_cap,omitempty"`
}

// JSON is the report as indented JSON, one newline after it.
func (r Report) JSON() ([]byte, error) {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// CostCheck is the protocol's check before loading: is the planned load
// over CostCheckRatio of the available tokens?
type CostCheck struct {
	Planned   int     `json:"planned_tokens"`
	Available int     `json:"available_tokens"`
	Threshold float64 `json:"threshold"`
	Ratio     float64 `json:"ratio"`
	Over      bool    `json:"over"`
}

// newCostCheck is the cost check of a planned load against the tokens
// available.
func newCostCheck(planned, available int) *CostCheck {
	return &CostCheck{
		Planned:   planned,
		Available: available,
		Threshold: CostCheckRatio,
		Ratio:     math.Round(float64(planned)/float64(available)*10000) / 10000,
		Over:      float64(planned) > CostCheckRatio*float64(available),
	}
}

// Result is an assembled briefing.
type Result struct {
	Report
	// Fence holds the text's stop-commands markers when asked for.
	Fence *fence.Fence
	// Budget is the load's cap, Issue the issue's number, At when it was
	// assembled, FilesRequested how many files were asked for.
	Budget         entryload.LoadCap
	Issue          int64
	At             time.Time
	FilesRequested int
	entries        int // the checkpoint's history entries
}

// Text is the load as text, between the fence's markers when there is
// one.
func (r *Result) Text() string {
	if r.Fence != nil {
		return r.Fence.Open() + r.Load.Text + r.Fence.Close()
	}
	return r.Load.Text
}

// CostWarning says the planned load is over the cost check's share of the
// cap; "" when it is not.
func (r *Result) CostWarning() string {
	if !r.CostCheck.Over {
		return ""
	}
	capTokens := r.Budget.Cap
	return fmt.Sprintf("issue #%d: the planned load takes %s tokens, over %.0f%% of the %s available (%s): load fewer files or ask for a "+
		"slimmer task",
		r.Issue, tokens.Format(r.Load.Planned), CostCheckRatio*100, tokens.Format(capTokens), tokens.Format(int(CostCheckRatio*float64(capTokens))))
}

// stamp is the time of the load as its records write it: RFC 3339 in UTC.
func (r *Result) stamp() string { return r.At.UTC().Format("2006-01-02T15:04:05Z") }

// filesLoaded counts the files the load holds, whole or cut.
func (r *Result) filesLoaded() int {
	n := 0
	for _, s := range r.Load.Sections {
		if s.Kind == entryload.KindFile && s.Status != entryload.Dropped {
			n++
		}
	}
	return n
}

// Metrics is the action's context-budget record (docs/contract.md §7)
// with files_loaded, for a load.
type Metrics struct {
	TS                string  `json:"ts"`
	Agent             string  `json:"agent"`
	Issue             int64   `json:"issue"`
	ContextLoaded     int     `json:"context_loaded"`
	ContextAvailable  int     `json:"context_available"`
	ContextRatio      float64 `json:"context_ratio"`
	FilesLoaded       int     `json:"files_loaded"`
	CheckpointEntries int     `json:"checkpoint_entries"`
	Pruned            bool    `json:"pruned"`
}

// Metrics is the load's context-budget record.
func (r *Result) Metrics() Metrics {
	load, maxContext := r.Load, r.Budget.MaxContext
	m := Metrics{TS: r.stamp(), Agent: load.Agent, Issue: r.Issue, ContextLoaded: load.Tokens, ContextAvailable: maxContext,
		FilesLoaded: r.filesLoaded(), CheckpointEntries: r.entries, Pruned: len(load.Dropped)+len(load.Cut) > 0}
	if maxContext > 0 {
		m.ContextRatio = math.Round(float64(load.Tokens)/float64(maxContext)*10000) / 10000
	}
	return m
}

// Overflow is one line of the overflow log: a load over the cost check.
type Overflow struct {
	TS             string   `json:"ts"`
	Agent          string   `json:"agent"`
	Issue          int64    `json:"issue"`
	Estimate       int      `json:"estimate"`
	Available      int      `json:"available"`
	Ratio          float64  `json:"ratio"`
	Threshold      float64  `json:"threshold"`
	Loaded         int      `json:"loaded"`
	FilesRequested int      `json:"files_requested"`
	FilesLoaded    int      `json:"files_loaded"`
	Dropped        []string `json:"dropped"`
	Cut            []string `json:"cut"`
}

// Overflow is the load's overflow-log record.
func (r *Result) Overflow() Overflow {
	load := r.Load
	return Overflow{TS: r.stamp(), Agent: load.Agent, Issue: r.Issue, Estimate: load.Planned, Available: r.Budget.Cap, Ratio: r.CostCheck.Ratio,
		Threshold: CostCheckRatio, Loaded: load.Tokens, FilesRequested: r.FilesRequested, FilesLoaded: r.filesLoaded(),
		Dropped: load.Dropped, Cut: load.Cut}
}
