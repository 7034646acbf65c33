package e2e

import (
	"slices"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// Any write collaborator may re-run an old workflow run, and the step then
// gets that run's payload again. Re-running an approver's approval run
// after a new tamper approves nothing: who removed permission::violation
// comes from the issue's timeline, newer than the guard's ledger, never
// from the payload. Through the real runner.
func TestRerunOfAnApprovalRunIsHarmless(t *testing.T) {
	t.Parallel()
	s0 := giteatest.Require(t)
	r := newGuardRepo(t, map[string]string{"budget-admins": s0.AdminLogin})
	std := []label{r.createLabel("cascade::depth-2"), r.createLabel("size::medium"), r.createLabel("phase::implementation")}
	const n = 1
	healthy := numbered(t, example(t, "healthy.md"), n)
	r.openIssue(n, "Rate limiting (re-run)", healthy, std...)
	runs := 2
	wantOpened(t, r.waitRuns(n, runs), "success")

	// Consumption hidden: the run fails and sets permission::violation.
	r.editBody(n, replaceOnce(t, healthy, "consumed: 6200\n    remaining: 13800", "consumed: 5000\n    remaining: 15000"))
	runs++
	wantLast(t, r.waitRuns(n, runs), "issues.edited", "failure")
	pv := labelNamed(t, r.issue(n), "permission::violation")

	// The approver accepts it: the approval run.
	r.removeLabel(n, pv)
	runs++
	approval := wantLast(t, r.waitRuns(n, runs), "issues.label_updated", "success")

	// More consumption hidden, then the approval run re-run.
	r.editBody(n, replaceOnce(t, r.issue(n).Body, "consumed: 5000\n    remaining: 15000", "consumed: 1000\n    remaining: 19000"))
	runs++
	wantLast(t, r.waitRuns(n, runs), "issues.edited", "failure")
	if again := r.rerun(approval); again.Conclusion != "failure" {
		t.Errorf("the re-run of the approval run ended %s, want failure: it must approve nothing", again.Conclusion)
	}
	if got := r.issue(n).labelNames(); !slices.Contains(got, "permission::violation") {
		t.Errorf("labels after the re-run: %v, want permission::violation still on", got)
	}
}
