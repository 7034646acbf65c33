package agentwrite

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Waiting says a refused report found only what failed the issue before
// it: the issue waits for a person, whatever the report says.
func (res *ReportResult) Waiting() bool {
	for _, f := range res.Findings {
		if !slices.Contains(res.AlreadyFailing, f.Rule) {
			return false
		}
	}
	return len(res.Findings) > 0
}

// WriteText writes the result as a person reads it. It holds agents' text:
// the caller fences it where a runner would obey commands in it.
func (res *ReportResult) WriteText(w io.Writer) {
	n := res.Issue
	switch res.Outcome {
	case "refused":
		res.writeRefusal(w)
	case "dry-run":
		fmt.Fprintf(w, "gns-guard: report: issue #%d: dry run, nothing was written. The comment would be:\n\n%s\n", n, res.Comment)
	case "already-reported":
		fmt.Fprintf(w, "gns-guard: report: issue #%d: already reported; nothing written twice\n", n)
	default:
		if res.CommentPosted {
			fmt.Fprintf(w, "gns-guard: report: issue #%d: posted comment %d %s\n", n, res.CommentID, res.CommentURL)
		}
		fmt.Fprintf(w, "gns-guard: report: issue #%d: checkpoint patched (content version %d)\n", n, res.ContentVersion)
	}
	if res.Outcome != "refused" && res.Outcome != "already-reported" {
		res.writeEffect(w)
	}
	for _, note := range res.Notes {
		fmt.Fprintf(w, "note: %s\n", note)
	}
}

// writeRefusal says why nothing was written and what to do.
func (res *ReportResult) writeRefusal(w io.Writer) {
	n := res.Issue
	fmt.Fprintf(w, "gns-guard: report: issue #%d: refused, nothing was written: the guard would fail the state this report leaves:\n", n)
	for _, f := range res.Findings {
		fmt.Fprintln(w, f.Format(fmt.Sprintf("issue#%d", n)))
	}
	if len(res.AlreadyFailing) > 0 {
		fmt.Fprintf(w, "(already failing before this report: %s)\n", strings.Join(res.AlreadyFailing, ", "))
	}
	if res.Waiting() {
		fmt.Fprintf(w, "The issue waits for a person before any report: the findings above name the step, and no report fixes it. "+
			"--force writes it anyway and the guard fails the run.\n")
	} else {
		fmt.Fprintf(w, "Fix the report (a smaller --next-estimate, another --next-agent, ...) or ask a person; "+
			"--force writes it anyway and the guard fails the run.\n")
	}
}

// writeEffect states budget, next agent and changes.
func (res *ReportResult) writeEffect(w io.Writer) {
	fmt.Fprintf(w, "budget: total %d · consumed %d → %d · remaining %d → %d\n",
		res.After.Total, res.Before.Consumed, res.After.Consumed, res.Before.Remaining, res.After.Remaining)
	if res.NextAgent == "" {
		fmt.Fprintln(w, "next: none (the workflow is done)")
	} else {
		fmt.Fprintf(w, "next: %s, estimated %d tokens\n", res.NextAgent, res.NextEstimate)
	}
	if len(res.LabelsAdded)+len(res.LabelsRemoved) > 0 {
		fmt.Fprintf(w, "labels: +[%s] −[%s]\n", strings.Join(res.LabelsAdded, ", "), strings.Join(res.LabelsRemoved, ", "))
	}
	if res.Assignee != nil {
		fmt.Fprintf(w, "assignee: %s\n", *res.Assignee)
	}
	if res.CurrentTask != nil {
		fmt.Fprintf(w, "current task: %s\n", *res.CurrentTask)
	}
}
