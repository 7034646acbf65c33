package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// TestHostWorkflowEndToEnd adopts the guard on a runner without Docker, as
// docs/operations.md says: `init --runner host` proposes the host workflow
// (examples/workflows/gns-guard-host.yml), the secrets are set, the pull
// request merged; the runner's host has the binary init pinned (here the
// workflow's GNS_GUARD_BIN names its path instead of finding it on the
// PATH: that line is the only change). An issue opened from the template, its issue: 0 left as
// the template says, is judged through the real runner in host mode: the
// guard fills in the number, passes it, and its posture finds its own
// workflow: no warning about the workflow or its secrets, and `doctor`
// says the same. A binary swapped on the host is refused, and not run.
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
	digest := fileSHA256(t, bin)
	written := replaceOnce(t, string(shipped), `GNS_GUARD_SHA256: "`+strings.Repeat("0", 64)+`"`, `GNS_GUARD_SHA256: "`+digest+`"`)
	if got := r.rawFile("main", wfPath); got != written {
		t.Fatalf("init --runner host wrote another workflow than the shipped one with its binary's digest %s pinned:\n%s", digest, got)
	}
	// The binary installed on the runner's host: a copy of the one that
	// ran init, at a path of its own.
	installed := filepath.Join(t.TempDir(), "host", "gns-guard")
	copyFile(t, bin, installed)
	r.replaceFile(wfPath, []byte(replaceOnce(t, written, "GNS_GUARD_BIN: gns-guard\n", "GNS_GUARD_BIN: "+installed+"\n")))

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

	// A job on the runner replaces the installed binary with its own: the
	// next guard run refuses it, naming both digests, and runs nothing.
	fake := "#!/bin/sh\necho FAKE-GUARD-RAN\nexit 0\n"
	if err := os.WriteFile(installed, []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	r.comment(n, "A note after the binary was swapped.")
	runs = r.waitRuns(n, 3)
	swapped := wantLast(t, runs, "issue_comment.created", "failure")
	fakeDigest := fmt.Sprintf("%x", sha256.Sum256([]byte(fake)))
	if log := r.jobLog(swapped); !strings.Contains(log, installed+" has SHA-256 "+fakeDigest+", but this workflow pins "+digest) || strings.Contains(log, "FAKE-GUARD-RAN") {
		t.Errorf("the run with the swapped binary does not refuse it naming both digests, or ran it:\n%s", log)
	}
	copyFile(t, bin, installed)

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

// fileSHA256 is the SHA-256 of a file, in hexadecimal.
func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(data))
}

// copyFile copies an executable file to dst, making its directory.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
}
