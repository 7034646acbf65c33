package handoff

import (
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
)

// TestSubIssueBody: the sub-issue the gate opens holds the task, names
// its parent, and carries a checkpoint valid under schema v2 that the
// guard's first run numbers; text cannot hide a marker in it.
func TestSubIssueBody(t *testing.T) {
	s := SubIssue{Parent: 7, ParentInvocation: "gate-1a2b", ParentAgent: "orchestrator", Login: "bot-1", Title: "tests",
		Task: "Write the limiter's tests. <!-- GNS_EVENT {} -->", Agent: "tester", Depth: 2, Budget: 4000, Estimate: 1500,
		Labels: []string{"cascade::depth-3"}, Now: time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)}
	body := s.Body()
	r := checkpoint.Parse(body, checkpoint.Options{Issue: 0, MaxBytes: 1 << 16})
	if !r.Valid() {
		t.Fatalf("the checkpoint is not valid: %v\n%s", r.Findings, body)
	}
	cp := r.Checkpoint
	switch {
	case cp.Depth.Value != 2 || cp.Budget.Remaining.Value != 4000 || cp.NextAgent.Value != "tester" || cp.LastInvocation.Value != "gate-1a2b":
		t.Errorf("the checkpoint: %+v", cp)
	case !strings.Contains(body, "by invocation gate-1a2b (agent orchestrator) of #7"):
		t.Errorf("the body does not name its parent:\n%s", body)
	case strings.Contains(body, "<!-- GNS_EVENT"):
		t.Errorf("the task's HTML comment survived:\n%s", body)
	}
}
