package cli_test

import (
	"strings"
	"testing"
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
	return runAgentScript(t, f, invocation, nil)
}

// TestAgentExample runs the shipped example agent against the real Gitea:
// entry and exit on a healthy issue (the guard passes every run it
// records), the same invocation again (nothing written twice), and the
// recovery proposal on a body an agent broke.
func TestAgentExample(t *testing.T) {
	t.Parallel()
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
