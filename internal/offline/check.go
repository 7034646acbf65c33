package offline

import (
	"fmt"
	"io"
	"strconv"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// CheckReport is what `check` found, in its JSON form.
type CheckReport struct {
	File     string            `json:"file"`
	Valid    bool              `json:"valid"`
	Errors   int               `json:"errors"`
	Warnings int               `json:"warnings"`
	Findings []finding.Finding `json:"findings"`
	Labels   []string          `json:"labels"`
	Plan     []string          `json:"plan"`
	Numbers  *guard.Numbers    `json:"numbers,omitempty"`
	// line is the one line a clean check prints.
	line string
}

// Check runs the guard's decision on a body offline and reports it, with
// the one line a clean check prints. It judges as the action does: an
// over-long history_tail, which the action repairs by pruning, is a
// warning next to the planned prune.
func Check(o Input) CheckReport {
	cfg := o.Config
	d := Decide(o)
	plan, labelList := d.Plan, d.Labels
	found := plan.Findings()
	rep := CheckReport{File: o.Source, Findings: finding.Sort(found), Errors: finding.Errors(found), Labels: labelList, Plan: describePlan(plan, cfg)}
	rep.Warnings = len(found) - rep.Errors
	rep.Valid = rep.Errors == 0
	if plan.Governed {
		rep.Numbers = &plan.Numbers
	}
	if rep.Findings == nil {
		rep.Findings = []finding.Finding{}
	}
	if rep.Labels == nil {
		rep.Labels = []string{}
	}
	if !plan.Governed {
		// As the action: nothing to govern, nothing to write, exit 0.
		rep.line = "not governed: no checkpoint block (a ```yaml fenced block whose root key is checkpoint; 'gns-guard schema' shows its shape)" +
			" and no cascade:: or budget:: label, so the action passes and writes nothing"
		return rep
	}
	rep.line = summary(d.Parsed.Checkpoint, plan)
	return rep
}

// WriteText writes the report as text: a line per finding and planned
// write, then the summary line (on stderr when the body is not valid).
func (rep CheckReport) WriteText(stdout, stderr io.Writer) {
	for _, f := range rep.Findings {
		fmt.Fprintln(stdout, f.Format(rep.File))
	}
	for _, w := range rep.Plan {
		fmt.Fprintf(stdout, "%s: the action would %s\n", rep.File, w)
	}
	if rep.Valid {
		fmt.Fprintf(stdout, "%s: %s\n", rep.File, rep.line)
	} else {
		fmt.Fprintf(stderr, "%s: %s, %s\n", rep.File, markdown.Plural(rep.Errors, "error"), markdown.Plural(rep.Warnings, "warning"))
	}
}

// describePlan lists the writes the action would make for a plan, in the
// words a dry run logs them with. Offline, whether the status comment
// exists is unknown.
func describePlan(p *guard.Plan, cfg config.Config) []string {
	out := []string{}
	for _, w := range p.Writes() {
		out = append(out, w.Planned())
	}
	if r := p.Prune; r != nil && r.NewBudget != r.Budget {
		out = append(out, fmt.Sprintf("start a new phase budget with the prune: total %d, consumed %d, remaining %d "+
			"(was %d of %d left: remaining × carryover-ratio + phase-grant)",
			r.NewBudget.Total, r.NewBudget.Consumed, r.NewBudget.Remaining, r.Budget.Remaining, r.Budget.Total))
	}
	if p.Governed && !p.Resolved {
		out = append(out, "post or update the status comment")
	}
	if p.Failed(cfg) {
		out = append(out, "fail the job")
	}
	return out
}

// summary is the one line a clean check prints.
func summary(cp *checkpoint.Checkpoint, p *guard.Plan) string {
	if cp == nil {
		return "ok"
	}
	next := cp.NextAgent.Value
	if next == "" {
		next = "(done)"
	}
	n := p.Numbers
	issue := strconv.FormatInt(cp.Issue.Value, 10)
	if f := p.Fill; f != nil && f.Number > 0 {
		issue = fmt.Sprintf("%d (from the template's placeholder 0, which the guard's first run sets)", f.Number)
	} else if f != nil {
		issue = "0 (the template's placeholder: the guard's first run on the issue sets its number)"
	}
	return fmt.Sprintf("ok: issue %s, phase %s, depth %d, budget %d of %d left, next %s (~%d tokens), entry context %d of %d tokens (%s task)",
		issue, strconv.Quote(cp.Phase.Value), cp.Depth.Value, cp.Budget.Remaining.Value, cp.Budget.Total.Value,
		strconv.Quote(next), cp.NextEstimatedTokens.Value,
		n.ContextTokens, n.MaxContext, n.TaskSize)
}
