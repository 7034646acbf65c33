package action

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/sethvargo/go-githubactions"
)

// outputDelimiter is the fixed heredoc delimiter of the toolkit's file
// commands. A value holding it could end the value early and add outputs
// of its own, so values are made single-line and stripped of it.
const outputDelimiter = "_GitHubActionsFileCommandDelimeter_"

// toolkit wraps the Actions toolkit's file commands, which panic when
// their file cannot be written: outputs and the step summary are written
// only when the runner named their files, and a failed write is a warning,
// never a crash.
type toolkit struct {
	gh     *githubactions.Action
	getenv func(string) string
	warn   func(format string, args ...any)
}

// output writes one output, injection-proof: every value is a single line
// (JSON escapes newlines) and can never hold the delimiter.
func (t *toolkit) output(name, value string) {
	value = strings.NewReplacer("\r", " ", "\n", " ", outputDelimiter, "").Replace(value)
	t.fileCommand("GITHUB_OUTPUT", func() { t.gh.SetOutput(name, value) })
}

// summary appends markdown to the step summary.
func (t *toolkit) summary(markdown string) {
	t.fileCommand("GITHUB_STEP_SUMMARY", func() { t.gh.AddStepSummary(markdown) })
}

// fileCommand runs write when the runner named the file env holds.
func (t *toolkit) fileCommand(env string, write func()) {
	if t.getenv(env) == "" {
		return
	}
	defer func() {
		if p := recover(); p != nil && t.warn != nil {
			t.warn("gns-guard: warning: cannot write %s: %v", env, p)
		}
	}()
	write()
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
func (r *runner) report(p *guard.Plan, res applied) {
	n := r.event.Number
	cfg := r.cfg
	if !p.Governed {
		r.log.infof("gns-guard: issue #%d is not governed (no checkpoint block, no cascade:: or budget:: label): nothing to do", n)
		r.kit.output("result", "skipped")
		r.kit.output("violations", "[]")
		r.kit.output("warnings", "[]")
		r.kit.output("pruned", "false")
		r.kit.output("archive-comment-ids", "[]")
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
	warnings := p.Warnings[:min(len(p.Warnings), guard.MaxListed)]
	wj, _ := json.Marshal(finding.Sort(append([]finding.Finding{}, warnings...)))
	ids, _ := json.Marshal(nonNil(res.archiveIDs))
	r.kit.output("result", result)
	r.kit.output("violations", string(vj))
	r.kit.output("warnings", string(wj))
	// A dry run reports what it would do, as its figures do: they measure
	// the pruned checkpoint.
	pruned := res.pruned || (cfg.DryRun && p.Prune != nil)
	r.kit.output("pruned", strconv.FormatBool(pruned))
	r.kit.output("archive-comment-ids", string(ids))
	if res.statusID != 0 {
		r.kit.output("status-comment-id", strconv.FormatInt(res.statusID, 10))
	}
	r.kit.output("max-depth", maxDepthText(nums))
	// Figures of a checkpoint that could not be read are unknown, not 0
	// (a later step would read a budget of 0 as exhausted): empty.
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
	r.kit.output("metrics", string(mj))
	if cfg.MetricsFile != "" && !cfg.DryRun {
		if err := r.o.AppendFile(cfg.MetricsFile, append(mj, '\n')); err != nil {
			r.log.infof("gns-guard: warning: cannot append to metrics-file: %v", err)
		}
	}
	r.kit.summary(guard.RenderSummary(n, p, cfg, res.notes))
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
func (r *runner) dryRun(in guard.Input, s *live.Snapshot, p *guard.Plan) applied {
	res := applied{notes: slices.Clone(r.notes)}
	if s.Status != nil {
		res.statusID = s.Status.ID
	}
	if s.Issue.NoCAS && !s.Issue.BodyTooLarge {
		res.notes = append(res.notes, noCAS)
	}
	for _, w := range p.Writes() {
		res.writes = append(res.writes, w.Planned())
	}
	done := guard.Applied{Notes: res.notes, Pruned: p.Prune != nil, Locked: p.Lock != ""}
	if st := guard.PlanStatus(in, p, s.Status, done, r.serverTime()); st.Do {
		res.writes = append(res.writes, st.Write.Planned())
		if in.Anchor.Writable {
			res.writes = append(res.writes, "write the anchor "+guard.AnchorName(in.Issue.Number))
		}
	}
	return res
}
