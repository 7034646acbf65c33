package action

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/status"
)

// Metrics is one .kilo/logs/context-budget.jsonl record.
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
func (r *runner) report(p *guard.Plan, res applied) {
	n := r.event.Number
	if !p.Governed {
		r.reportUngoverned()
		return
	}
	r.logFindings(p.Findings())
	r.logWrites(res.writes)
	result := "pass"
	if len(p.Violations) > 0 {
		result = "fail"
	}
	r.log.infof("gns-guard: issue #%d: %s (%d violation(s), %d warning(s))%s", n, result, len(p.Violations), len(p.Warnings), requests(r.forge, r.admin))
	// A dry run's figures measure the pruned checkpoint too.
	pruned := res.pruned || (r.cfg.DryRun && p.Prune != nil)
	r.outputResult(p, result, pruned, res)
	r.outputNumbers(p.Numbers)
	r.outputMetrics(p.Numbers, pruned)
	r.kit.summary(status.Summary(n, p, r.cfg, res.notes))
}

// reportUngoverned logs and outputs that there was nothing to do.
func (r *runner) reportUngoverned() {
	r.log.infof("gns-guard: issue #%d is not governed (no checkpoint block, no cascade:: or budget:: label): nothing to do", r.event.Number)
	r.kit.output("result", "skipped")
	r.kit.output("violations", "[]")
	r.kit.output("warnings", "[]")
	r.kit.output("pruned", "false")
	r.kit.output("archive-comment-ids", "[]")
}

// logFindings logs at most guard.MaxListed, as untrusted lines.
func (r *runner) logFindings(fs []finding.Finding) {
	n := r.event.Number
	lines := make([]string, 0, min(len(fs), guard.MaxListed)+1)
	for _, f := range fs[:min(len(fs), guard.MaxListed)] {
		lines = append(lines, f.Format(fmt.Sprintf("issue#%d", n)))
	}
	if len(fs) > guard.MaxListed {
		lines = append(lines, fmt.Sprintf("issue#%d: … and %d more finding(s) ('gns-guard check' on the body lists them all)", n, len(fs)-guard.MaxListed))
	}
	r.log.untrusted(lines...)
}

// logWrites logs the writes made, or a dry run's.
func (r *runner) logWrites(writes []string) {
	verb := "wrote"
	if r.cfg.DryRun {
		verb = "would write"
	}
	for _, w := range writes {
		r.log.infof("gns-guard: %s: %s", verb, w)
	}
	if len(writes) == 0 {
		r.log.infof("gns-guard: no writes needed")
	}
}

// outputResult writes the outputs of the verdict: the result, the
// violations and warnings (at most guard.MaxListed of each), and what was
// pruned, archived and posted as the status comment.
func (r *runner) outputResult(p *guard.Plan, result string, pruned bool, res applied) {
	violations := make([]finding.Finding, 0, min(len(p.Violations), guard.MaxListed))
	for _, v := range p.Violations[:min(len(p.Violations), guard.MaxListed)] {
		violations = append(violations, v.Finding)
	}
	vj, _ := json.Marshal(violations)
	warnings := p.Warnings[:min(len(p.Warnings), guard.MaxListed)]
	wj, _ := json.Marshal(finding.Sort(append([]finding.Finding{}, warnings...)))
	ids, _ := json.Marshal(nonNil(res.archiveIDs))
	r.kit.output("result", result)
	r.kit.output("violations", string(vj))
	r.kit.output("warnings", string(wj))
	r.kit.output("pruned", strconv.FormatBool(pruned))
	r.kit.output("archive-comment-ids", string(ids))
	if res.statusID != 0 {
		r.kit.output("status-comment-id", strconv.FormatInt(res.statusID, 10))
	}
}

// outputNumbers writes the outputs of the measured figures. Figures of a
// checkpoint that could not be read are unknown, not 0 (a later step would
// read a budget of 0 as exhausted): empty.
func (r *runner) outputNumbers(nums guard.Numbers) {
	r.kit.output("max-depth", maxDepthText(nums))
	known := func(v string) string {
		if !nums.Known {
			return ""
		}
		return v
	}
	r.kit.output("depth", known(strconv.FormatInt(nums.Depth, 10)))
	r.kit.output("budget-remaining", known(strconv.FormatInt(nums.BudgetRemaining, 10)))
	r.kit.output("checkpoint-tokens", known(strconv.Itoa(nums.CheckpointTokens)))
	r.kit.output("context-tokens", known(strconv.FormatInt(nums.ContextTokens, 10)))
	r.kit.output("context-ratio", known(strconv.FormatFloat(nums.ContextRatio, 'f', 4, 64)))
}

// outputMetrics outputs the record and, unless dry, appends it to the file.
func (r *runner) outputMetrics(nums guard.Numbers, pruned bool) {
	m := Metrics{
		TS:                r.o.Now().UTC().Format("2006-01-02T15:04:05Z"),
		Agent:             nums.Agent,
		Issue:             r.event.Number,
		ContextLoaded:     nums.ContextTokens,
		ContextAvailable:  nums.MaxContext,
		ContextRatio:      nums.ContextRatio,
		CheckpointEntries: nums.Entries,
		Pruned:            pruned,
	}
	mj, _ := json.Marshal(m)
	r.kit.output("metrics", string(mj))
	if r.cfg.MetricsFile != "" && !r.cfg.DryRun {
		if err := r.o.AppendFile(r.cfg.MetricsFile, append(mj, '\n')); err != nil {
			r.log.infof("gns-guard: warning: cannot append to metrics-file: %v", err)
		}
	}
}

func maxDepthText(n guard.Numbers) string {
	switch {
	case !n.MaxDepthKnown:
		return ""
	case n.MaxDepth == config.Unlimited:
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

// requests says the API requests made, and admin-token's.
func requests(f, admin port.Connection) string {
	out := fmt.Sprintf(", %d API request(s)", f.Requests())
	if admin != f && admin.Requests() > 0 {
		out += fmt.Sprintf(" and %d with admin-token", admin.Requests())
	}
	return out
}
