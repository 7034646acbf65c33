package dashboard

import (
	"context"
	"fmt"

	"github.com/gns-guard/gns-guard/internal/posture"
)

// maxWorkflowBytes bounds the read of a disabled workflow's file.
const maxWorkflowBytes = 256 << 10

// disabledGuards are the disabled workflows that run the guard: one
// request to list the workflows, and one more per disabled one (a healthy
// repository has none). A listing the token may not read is a note, not a
// failure: the sweep's issues are still judged.
func (s *Sweep) disabledGuards(ctx context.Context, res *Result) {
	if s.Workflows == nil {
		return
	}
	wfs, err := s.Workflows.Workflows(ctx)
	if err != nil {
		res.WorkflowNote = fmt.Sprintf("could not list the repository's workflows to see whether the guard's is disabled (%v): the "+
			"token needs Actions read", err)
		return
	}
	for _, wf := range wfs {
		if wf.State == "active" {
			continue
		}
		data, err := s.Workflows.File(ctx, wf.Path, maxWorkflowBytes)
		if err != nil || posture.RunsGuard(data) {
			// An unreadable disabled workflow is named too.
			res.DisabledWorkflows = append(res.DisabledWorkflows, wf.Path)
		}
	}
}

// workflowLines warn of a disabled guard workflow, or an unmade check.
func workflowLines(r *Result) []string {
	var out []string
	for _, p := range r.DisabledWorkflows {
		out = append(out, fmt.Sprintf("warning: the guard's workflow %s is disabled: no guard run judges the issues' changes, so they "+
			"go unchecked; ask an owner of the repository to enable it (Actions → the workflow → Enable) and to keep Actions write from "+
			"agents", plain(p, 200)))
	}
	if r.WorkflowNote != "" {
		out = append(out, "note: "+plain(r.WorkflowNote, 400))
	}
	return out
}
