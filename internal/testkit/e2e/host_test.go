package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// TestHostWorkflowEndToEnd adopts the guard on a runner without Docker, as
// docs/operations.md says: `init --runner host` proposes the host workflow
// (examples/workflows/gns-guard-host.yml), the secrets are set, the pull
// request merged; the runner's host has the binary (here the workflow
// names its path instead of finding it on the PATH: that word is the
// only change). An issue opened from the template, its issue: 0 left as
// the template says, is judged through the real runner in host mode: the
// guard fills in the number, passes it, and its posture finds its own
// workflow: no warning about the workflow or its secrets, and `doctor`
// says the same.
func TestHostWorkflowEndToEnd(t *testing.T) {
	t.Parallel()
	s := giteatest.Require(t)
	bin := buildGuard(t, t.TempDir())
	owner, name := s.NewRepo(t)
	runner := s.RepoRunner(t, owner, name)
	r := &repo{t: t, srv: s, runner: runner, owner: owner, name: name, bin: bin, deadline: time.Now().Add(initBudget)}

	out := r.gns("init", "--repo", owner+"/"+name, "--server", s.URL, "--token", s.AdminToken, "--runner", "host")
	if !strings.Contains(out, "Install gns-guard on the runner's host") {
		t.Errorf("init --runner host does not say to install the binary:\n%s", out)
	}
	r.setSecret("GNS_GUARD_LEDGER_KEY", strings.TrimSpace(r.gns("keygen")))
	r.setSecret("GNS_GUARD_ADMIN_TOKEN", s.AdminToken)
	r.mergePull(1)
	const wfPath = ".gitea/workflows/gns-guard.yml"
	shipped, err := os.ReadFile(repoRoot + "/" + hostWorkflowPath)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.rawFile("main", wfPath); got != string(shipped) {
		t.Fatalf("init --runner host wrote another workflow:\n%s", got)
	}
	r.replaceFile(wfPath, []byte(replaceOnce(t, string(shipped), "run: gns-guard action\n", "run: exec "+shellQuote(bin)+" action\n")))

	tmpl, labels := r.template()
	const n = 2 // init's pull request took #1
	opened := time.Now()
	r.openIssue(n, "Rate limits for the public API", tmpl.Content, labels...)
	runs := r.waitRuns(n, 2)
	t.Logf("the issue's two runs through the host runner finished %s after it was opened", time.Since(opened).Round(100*time.Millisecond))
	wantOpened(t, runs, "success")
	if body := r.issue(n).Body; !strings.Contains(body, fmt.Sprintf("  issue: %d\n", n)) {
		t.Errorf("the guard did not fill in the issue's number:\n%s", body)
	}
	// The posture's warnings are about main's protection, the public key
	// and the guard's own token, which init's next steps leave to do;
	// none is about the workflow or the secrets it names.
	status := statusComment(t, r.comments(n), n)
	for _, bad := range []string{"uses gns-guard", "nothing judges", "no ledger-key secret", "is disabled", "does not run on", "follows", "work directory", "GNS\\_GUARD\\_LEDGER\\_KEY", "GNS\\_GUARD\\_ADMIN\\_TOKEN"} {
		if strings.Contains(status.Body, bad) {
			t.Errorf("the status comment warns of the guard's own workflow (%q):\n%s", bad, status.Body)
		}
	}
	if !strings.Contains(status.Body, "all clear") || !strings.Contains(status.Body, "main is not protected") {
		t.Errorf("want all clear, with the posture's warnings about main:\n%s", status.Body)
	}
	var logs string
	for _, run := range runs {
		if run.Conclusion != "cancelled" {
			logs += r.jobLog(run)
		}
	}
	if !strings.Contains(logs, "posture judged for commit") {
		t.Errorf("no run judged the posture:\n%s", logs)
	}

	r.setSecret("GNS_GUARD_TOKEN", "the guard's own token")
	checks := r.doctor()
	for _, id := range []string{"workflow.present", "workflow.enabled", "workflow.triggers", "workflow.pull-request-target", "workflow.pinned", "secrets.present"} {
		if c, ok := checks[id]; !ok || !c.Holds {
			t.Errorf("doctor: %s does not hold: %+v", id, c)
		}
	}
}

// doctorCheck is a check of `doctor --format json`.
type doctorCheck struct {
	ID    string `json:"id"`
	Holds bool   `json:"holds"`
	Why   string `json:"why"`
}

// doctor runs `gns-guard doctor` with the owner's token as the admin
// token and returns its checks by id; exit 1 (a guarantee broken) is an
// answer too.
func (r *repo) doctor() map[string]doctorCheck {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, "doctor", "--repo", r.owner+"/"+r.name, "--server", r.srv.URL, "--format", "json")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "GITEA_TOKEN=" + r.srv.AdminToken, "GNS_GUARD_ADMIN_TOKEN=" + r.srv.AdminToken}
	out, _ := cmd.Output()
	var checks []doctorCheck
	if err := json.Unmarshal(out, &checks); err != nil {
		r.t.Fatalf("doctor: exit %d, %v:\n%s", cmd.ProcessState.ExitCode(), err, out)
	}
	byID := map[string]doctorCheck{}
	for _, c := range checks {
		byID[c.ID] = c
	}
	return byID
}
