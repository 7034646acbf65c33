package cli_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
)

// runAgentExample runs examples/agent/agent.sh with the gns-guard binary
// on PATH, as the agent.
func runAgentExample(t *testing.T, f *flow, invocation string) (stdout, stderr string, code int) {
	stdout, stderr, code, _ = runAgentExampleIn(t, f, invocation)
	return stdout, stderr, code
}

// runAgentExampleIn runs the example and also returns the entry load it
// wrote.
func runAgentExampleIn(t *testing.T, f *flow, invocation string) (stdout, stderr string, code int, entry string) {
	t.Helper()
	root, err := testkit.Root()
	if err != nil {
		t.Fatal(err)
	}
	bin := actiontest.Binary(t)
	work := t.TempDir()
	cmd := exec.Command("sh", filepath.Join(root, "examples", "agent", "agent.sh"))
	cmd.Env = []string{
		"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + work,
		"GITHUB_SERVER_URL=" + f.r.S.URL,
		"GITEA_TOKEN=" + f.agent.Token,
		"REPO=" + f.r.Owner + "/" + f.r.Name,
		"ISSUE=" + strconv.FormatInt(f.n, 10),
		"INVOCATION=" + invocation,
		"WORKDIR=" + work,
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(work, "entry.md"))
	return out.String(), errb.String(), code, string(data)
}

// TestAgentExample runs the shipped example agent against the real Gitea:
// entry and exit on a healthy issue (the guard passes every run it
// records), the same invocation again (nothing written twice), and the
// recovery proposal on a body an agent broke.
func TestAgentExample(t *testing.T) {
	f := newFlow(t, 20000, "cascade::depth-2", "size::medium", "phase::implementation")
	stdout, stderr, code, entry := runAgentExampleIn(t, f, "inv-example-1")
	t.Logf("entry.md:\n%s", entry)
	t.Logf("agent.sh, first run (exit %d):\n%s%s", code, stdout, stderr)
	if code != 0 || !strings.Contains(stdout, "checkpoint patched") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, res := range f.guard(t) {
		if res.Code != 0 {
			t.Fatalf("the guard failed: %s", res)
		}
	}
	if is := f.r.Issue(t, f.n); !is.Has("phase::review") || is.Has("phase::implementation") {
		t.Errorf("labels %v", is.LabelNames())
	}
	stdout, stderr, code = runAgentExample(t, f, "inv-example-1")
	t.Logf("agent.sh, the same invocation again (exit %d):\n%s%s", code, stdout, stderr)
	if code != 0 || !strings.Contains(stdout, "already reported") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	broken := strings.Replace(f.body(t), "  version: 2\n", "  version: two\n", 1)
	f.r.EditBody(t, f.n, f.agent, broken)
	f.guard(t)
	stdout, stderr, code = runAgentExample(t, f, "inv-example-2")
	t.Logf("agent.sh on a broken body (exit %d):\n%s%s", code, stdout, stderr)
	if code != 1 || !strings.Contains(stdout, "Proposed checkpoint") || !strings.Contains(stdout, "version: 2\n") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}
