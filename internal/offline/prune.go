package offline

import (
	"fmt"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// PruneReport is what pruning makes of a body, in the JSON form of
// `prune`. When nothing is pruned, Body is the body as it was, Archives is
// empty and NewBudget is Budget.
type PruneReport struct {
	File string `json:"file"`
	// Pruned says a trigger of the guard fired and the guard would write
	// the pruned body; Reason says why, or why not.
	Pruned    bool         `json:"pruned"`
	Reason    string       `json:"reason"`
	Body      string       `json:"body"`
	Archives  []string     `json:"archives"`
	SHA256    string       `json:"sha256"`
	Removed   int          `json:"removed"`
	Budget    prune.Budget `json:"budget"`
	NewBudget prune.Budget `json:"new_budget"`
	OldBytes  int          `json:"old_bytes"`
	NewBytes  int          `json:"new_bytes"`
	// Grew says a trigger fired but the pruned body would not be smaller,
	// so the guard writes nothing.
	Grew bool `json:"grew"`
	// Findings are the checkpoint's errors when it is not valid (and so is
	// never pruned).
	Findings []finding.Finding `json:"findings"`
	// Refused says the checkpoint is not valid: a violation.
	Refused bool `json:"-"`
}

// Prune says what pruning makes of a body, exactly as the guard decides it
// offline (the decision Check runs): when a trigger fires, the new body
// and the archive comment(s) the action would post first; otherwise the
// body unchanged, and which triggers were checked.
func Prune(o Input) PruneReport {
	d := Decide(o)
	rep := PruneReport{File: o.Source, Body: o.Body, Archives: []string{}, OldBytes: len(o.Body), NewBytes: len(o.Body), Findings: []finding.Finding{}}
	switch {
	case !d.Parsed.Valid():
		rep.refused(d.Parsed)
	case d.Plan.Prune != nil:
		rep.pruned(d.Plan.Prune)
	default:
		rep.notPruned(o.Body, d, o.Now, o.Config)
	}
	return rep
}

// refused fills the report of a body whose checkpoint is not valid, and so
// is never pruned: its findings, and why.
func (rep *PruneReport) refused(parsed checkpoint.Result) {
	found := parsed.Findings
	if len(parsed.Blocks) == 0 {
		found = append(found, finding.Finding{
			Rule: checkpoint.RuleMissing, Severity: finding.Error, Line: 1, Col: 1,
			Message: "no checkpoint block found: expected a ```yaml fenced block whose root key is checkpoint (run 'gns-guard schema' for its shape)",
		})
	}
	rep.Refused, rep.Findings = true, finding.Sort(found)
	rep.Reason = "the checkpoint is not valid; a body that cannot be trusted is never pruned"
}

// pruned fills the report from the prune the guard planned.
func (rep *PruneReport) pruned(res *prune.Result) {
	rep.Pruned, rep.Reason = true, res.Reason
	rep.Body, rep.SHA256, rep.Removed = res.Body, res.SHA256, res.Removed
	rep.Budget, rep.NewBudget, rep.OldBytes, rep.NewBytes = res.Budget, res.NewBudget, res.OldBytes, res.NewBytes
	if res.Archives != nil {
		rep.Archives = res.Archives
	}
}

// notPruned fills the report of a body the guard does not prune: its
// budget as it stands, and why no trigger fired, or why one that fired
// writes nothing.
func (rep *PruneReport) notPruned(body string, d Decision, now time.Time, cfg config.Config) {
	cp := d.Parsed.Checkpoint
	rep.Budget = prune.Budget{Total: cp.Budget.Total.Value, Consumed: cp.Budget.Consumed.Value, Remaining: cp.Budget.Remaining.Value}
	rep.NewBudget = rep.Budget
	trig := pruneTriggers(cp, d.Plan.Numbers, cfg)
	rep.Reason = trig.explain()
	for _, f := range d.Plan.Warnings {
		// A trigger fired but the guard writes nothing: its warning says why.
		if f.Rule == guard.RulePrune || f.Rule == guard.RuleCheckpointOverweight {
			rep.Reason = f.Message
		}
	}
	if trig.fired() {
		rep.Grew = wouldGrow(body, d, now, cfg, trig)
	}
}

// Note is the line for standard error: what was pruned, or why not.
func (rep PruneReport) Note() string {
	switch {
	case rep.Refused:
		return fmt.Sprintf("%s: %s", rep.File, rep.Reason)
	case rep.Pruned:
		return fmt.Sprintf("%s: pruned (%s): %s archived in %s, %d → %d bytes",
			rep.File, rep.Reason, markdown.Plural(rep.Removed, "entry"), markdown.Plural(len(rep.Archives), "part"), rep.OldBytes, rep.NewBytes)
	}
	return fmt.Sprintf("%s: not pruned, the body is printed unchanged: %s", rep.File, oneLine(rep.Reason))
}

// Text is the report as text: a refused body's findings, one a line;
// else the body, then each archive part after a '--- archive part i/n ---'
// line. Only the findings are the guard's own words.
func (rep PruneReport) Text() string {
	var b strings.Builder
	if rep.Refused {
		for _, f := range rep.Findings {
			fmt.Fprintln(&b, f.Format(rep.File))
		}
		return b.String()
	}
	b.WriteString(rep.Body)
	if rep.Pruned && !strings.HasSuffix(rep.Body, "\n") {
		b.WriteByte('\n')
	}
	for i, a := range rep.Archives {
		fmt.Fprintf(&b, "--- archive part %d/%d ---\n", i+1, len(rep.Archives))
		b.WriteString(a)
	}
	return b.String()
}
