package action

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/guard"
)

// outputDelimiter is the fixed heredoc delimiter of the toolkit's file
// commands. A value holding it could end the value early and add outputs
// of its own, so values are made single-line and stripped of it.
const outputDelimiter = "_GitHubActionsFileCommandDelimeter_"

// setOutput writes one output, injection-proof: every value is a single
// line (JSON escapes newlines) and can never hold the delimiter.
func (r *runner) setOutput(name, value string) {
	if r.o.Getenv("GITHUB_OUTPUT") == "" {
		return
	}
	value = strings.NewReplacer("\r", " ", "\n", " ", outputDelimiter, "").Replace(value)
	r.gh.SetOutput(name, value)
}

// Metrics is the context-budget record of one run, as in
// .kilo/logs/context-budget.jsonl.
type Metrics struct {
	TS                string  `json:"ts"`
	Agent             string  `json:"agent"`
	Issue             int64   `json:"issue"`
	ContextLoaded     int64   `json:"context_loaded"`
	ContextAvailable  int64   `json:"context_available"`
	ContextRatio      float64 `json:"context_ratio"`
	CheckpointEntries int     `json:"checkpoint_entries"`
	Pruned            bool    `json:"pruned"`
}

// report writes the log lines, outputs, step summary and metrics.
func (r *runner) report(s snapshot, p *guard.Plan, res applied) {
	n := r.event.Number
	cfg := r.set.Config
	if !p.Governed {
		r.log.infof("gns-guard: issue #%d is not governed (no checkpoint block, no cascade:: or budget:: label): nothing to do", n)
		r.setOutput("result", "skipped")
		r.setOutput("violations", "[]")
		r.setOutput("pruned", "false")
		r.setOutput("archive-comment-ids", "[]")
		return
	}
	fs := p.Findings()
	lines := make([]string, 0, min(len(fs), guard.MaxListed)+1)
	for _, f := range fs[:min(len(fs), guard.MaxListed)] {
		lines = append(lines, f.Format(fmt.Sprintf("issue#%d", n)))
	}
	if len(fs) > guard.MaxListed {
		lines = append(lines, fmt.Sprintf("issue#%d: … and %d more finding(s) ('gns-guard check' on the body lists them all)", n, len(fs)-guard.MaxListed))
	}
	r.log.untrusted(lines...)
	verb := "wrote"
	if cfg.DryRun {
		verb = "would write"
	}
	for _, w := range res.writes {
		r.log.infof("gns-guard: %s: %s", verb, w)
	}
	if len(res.writes) == 0 {
		r.log.infof("gns-guard: no writes needed")
	}
	result := "pass"
	if len(p.Violations) > 0 {
		result = "fail"
	}
	r.log.infof("gns-guard: issue #%d: %s (%d violation(s), %d warning(s))%s", n, result, len(p.Violations), len(p.Warnings), requests(r.forge))
	nums := p.Numbers
	violations := make([]finding.Finding, 0, min(len(p.Violations), guard.MaxListed))
	for _, v := range p.Violations[:min(len(p.Violations), guard.MaxListed)] {
		violations = append(violations, v.Finding)
	}
	vj, _ := json.Marshal(violations)
	ids, _ := json.Marshal(nonNil(res.archiveIDs))
	r.setOutput("result", result)
	r.setOutput("violations", string(vj))
	// A dry run reports what it would do, as its figures do: they measure
	// the pruned checkpoint.
	pruned := res.pruned || (cfg.DryRun && p.Prune != nil)
	r.setOutput("pruned", strconv.FormatBool(pruned))
	r.setOutput("archive-comment-ids", string(ids))
	r.setOutput("depth", strconv.FormatInt(nums.Depth, 10))
	r.setOutput("max-depth", maxDepthText(nums))
	r.setOutput("budget-remaining", strconv.FormatInt(nums.BudgetRemaining, 10))
	r.setOutput("checkpoint-tokens", strconv.Itoa(nums.CheckpointTokens))
	r.setOutput("context-tokens", strconv.FormatInt(nums.ContextTokens, 10))
	r.setOutput("context-ratio", strconv.FormatFloat(nums.ContextRatio, 'f', 4, 64))
	m := Metrics{
		TS:                r.o.Now().UTC().Format("2006-01-02T15:04:05Z"),
		Agent:             nums.Agent,
		Issue:             n,
		ContextLoaded:     nums.ContextTokens,
		ContextAvailable:  nums.MaxContext,
		ContextRatio:      nums.ContextRatio,
		CheckpointEntries: nums.Entries,
		Pruned:            pruned,
	}
	mj, _ := json.Marshal(m)
	r.setOutput("metrics", string(mj))
	if cfg.MetricsFile != "" && !cfg.DryRun {
		if err := r.o.AppendFile(cfg.MetricsFile, append(mj, '\n')); err != nil {
			r.log.infof("gns-guard: warning: cannot append to metrics-file: %v", err)
		}
	}
	if r.o.Getenv("GITHUB_STEP_SUMMARY") != "" {
		r.gh.AddStepSummary(guard.RenderSummary(n, p, cfg, res.notes))
	}
}

func maxDepthText(n guard.Numbers) string {
	switch {
	case !n.MaxDepthKnown:
		return ""
	case n.MaxDepth == guard.Unlimited:
		return "n"
	}
	return strconv.Itoa(n.MaxDepth)
}

func nonNil(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// requests reports how many API requests the run made, when the forge counts them.
func requests(f guard.Forge) string {
	if c, ok := f.(interface{ Requests() int64 }); ok {
		return fmt.Sprintf(", %d API request(s)", c.Requests())
	}
	return ""
}

// dryRun computes every write the plan would make and makes none: it only
// reads (to find the status comment, say).
func (r *runner) dryRun(s snapshot, p *guard.Plan) applied {
	res := applied{notes: slices.Clone(r.notes)}
	if !p.Governed {
		return res
	}
	if s.issue.NoCAS {
		res.notes = append(res.notes, noCAS)
	}
	for _, w := range p.Writes() {
		res.writes = append(res.writes, w.Planned())
	}
	if st := r.statusFor(s, p, s.status, res); st.write {
		res.writes = append(res.writes, st.w.Planned())
	}
	return res
}
