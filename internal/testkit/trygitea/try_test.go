package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// script is examples/try/run.sh, seen from this package.
var script = filepath.Join("..", "..", "..", "examples", "try", "run.sh")

// giteaWork finds the line where the script names Gitea's files.
var giteaWork = regexp.MustCompile(`files in (\S+)\);`)

// requireIntegration skips unless the real-Gitea tests are on (CI always
// has them on), as giteatest.Require does.
func requireIntegration(t *testing.T) {
	t.Helper()
	if !giteatest.Enabled() {
		t.Skipf("the try script starts a real Gitea: set %s=1 (CI runs it always)", giteatest.EnvIntegration)
	}
}

// TestTryScript runs examples/try/run.sh as a new user does: it adopts a
// repository with init on a throwaway Gitea and a host-mode runner, opens
// an issue from the template, runs three agent steps with the shipped
// tools, each judged by the guard through the runner, and prints the
// issue's address and an all-clear status comment with no warning; when
// it ends, Gitea, the runner and their files are gone.
func TestTryScript(t *testing.T) {
	requireIntegration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	began := time.Now()
	cmd := exec.CommandContext(ctx, "sh", script)
	out, err := cmd.CombinedOutput()
	t.Logf("examples/try/run.sh took %s", time.Since(began).Round(100*time.Millisecond))
	if err != nil {
		t.Fatalf("run.sh: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		"Every guarantee of the threat model holds (12 checks).",
		"Agent step 1", "Agent step 2", "Agent step 3",
		"budget: total 20000 · consumed 0 → 1200",
		"budget: total 20000 · consumed 1200 → 3600",
		"budget: total 20000 · consumed 3600 → 5100",
		"/acme/api/issues/2\n",
		"## ✅ gns-guard: all clear\n\nNo violations.\n",
		"| code-reviewer | 1 | 1,500 |",
		"The guard refuses", "next-over-budget", "(report exited 1: nothing was written",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the script's output lacks %q:\n%s", want, text)
		}
	}
	for _, bad := range []string{"warning", " failure\n", "BROKEN"} {
		if strings.Contains(text, bad) {
			t.Errorf("the script's output holds %q:\n%s", bad, text)
		}
	}
	wantGone(t, text)
}

// TestTryScriptStopsWhenKilled: SIGTERM to the script alone (kill PID),
// once Gitea is up, ends it with 143, and its trap stops Gitea and the
// runner it started: they and their files are gone. (Ctrl-C in a
// terminal signals the whole process group, Gitea's starter too.)
func TestTryScriptStopsWhenKilled(t *testing.T) {
	requireIntegration(t)
	cmd := exec.Command("sh", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); pw.Close() }()
	var seen bytes.Buffer
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if giteaWork.MatchString(sc.Text()) {
			break
		}
	}
	if !giteaWork.MatchString(seen.String()) {
		t.Fatalf("the script never said Gitea was up:\n%s", seen.String())
	}
	go io.Copy(&seen, pr) //nolint:errcheck // the rest of the output, for the log
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(2 * time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("the script, or something it started, still ran 2 minutes after SIGTERM:\n%s", seen.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 143 {
		t.Errorf("exit %d after SIGTERM, want 143", code)
	}
	wantGone(t, seen.String())
}

// wantGone checks that the Gitea the script named, its runner and their
// files are gone.
func wantGone(t *testing.T, output string) {
	t.Helper()
	m := giteaWork.FindStringSubmatch(output)
	if m == nil {
		t.Fatalf("the script did not name Gitea's files:\n%s", output)
	}
	if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
		t.Errorf("Gitea's files %s are still there (%v)", m[1], err)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(m[1])) {
			t.Errorf("a process still runs from %s: %s", m[1], bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		}
	}
}
