package posture

import (
	"os"
	"strings"
	"testing"
)

// shippedHost is the host workflow as shipped: no binary's digest pinned.
func shippedHost(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../../examples/workflows/gns-guard-host.yml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hostDigest is the binary digest the tests pin.
const hostDigest = "3f0e2a9d1c4b5a6978877665544332211009f8e7d6c5b4a39281706f5e4d3c2b"

// hostTemplate is the workflow `gns-guard init --runner host` writes: the
// shipped one with the binary's digest pinned.
func hostTemplate(t *testing.T) []byte {
	t.Helper()
	placeholder := `GNS_GUARD_SHA256: "` + strings.Repeat("0", 64) + `"`
	s := string(shippedHost(t))
	if !strings.Contains(s, placeholder) {
		t.Fatalf("the host workflow lacks %s", placeholder)
	}
	return []byte(strings.Replace(s, placeholder, `GNS_GUARD_SHA256: "`+hostDigest+`"`, 1))
}

// The host workflow runs the binary only when its digest is pinned: as
// shipped (the placeholder), or with a step that does not check the copy,
// workflow.pinned does not hold.
func TestHostWorkflowPinsTheBinary(t *testing.T) {
	f := recommended(t)
	for _, c := range []struct {
		name, content, why string
	}{
		{"shipped", string(shippedHost(t)), "pins no binary's digest"},
		{"no check", strings.Replace(string(hostTemplate(t)), "sha256sum", "md5sum", -1), "without checking its SHA-256"},
		{"pinned", string(hostTemplate(t)), "runs only the binary whose SHA-256 the workflow pins (" + hostDigest[:12]},
	} {
		f.Workflows = []Workflow{{Path: ".gitea/workflows/gns-guard.yml", Content: []byte(c.content)}}
		if got := byID(Judge(f))["workflow.pinned"]; !strings.Contains(got.Why, c.why) || got.Holds != (c.name == "pinned") {
			t.Errorf("%s: %+v, want %q", c.name, got, c.why)
		}
	}
}

// The host workflow, which runs the binary with the action's inputs as
// INPUT_ variables, is the guard's workflow: every check holds in the
// recommended posture, with the same required check and secrets.
func TestHostWorkflowIsTheGuards(t *testing.T) {
	f := recommended(t)
	f.Workflows = []Workflow{{Path: ".gitea/workflows/gns-guard.yml", Content: hostTemplate(t)}}
	for _, c := range Judge(f) {
		if !c.Holds {
			t.Errorf("%s does not hold with the host workflow: %s", c.ID, c.Why)
		}
	}
	if got, ok := StatusContext(".gitea/workflows/gns-guard.yml", hostTemplate(t)); !ok || got != "gns-guard / guard (pull_request_target)" {
		t.Errorf("StatusContext = %q, %v", got, ok)
	}
	noKey := strings.Replace(string(hostTemplate(t)), "INPUT_LEDGER-KEY:", "INPUT_LEDGER_KEY:", 1)
	f.Workflows[0].Content = []byte(noKey)
	if c := byID(Judge(f))[CheckSecrets]; c.Holds || !strings.Contains(c.Why, "gives the guard no ledger-key secret") {
		t.Errorf("INPUT_LEDGER_KEY, which the guard does not read, passed for the ledger key: %+v", c)
	}
}

// A run: step is the guard's when it runs the binary's action verb, or
// go run of the command; whether an account with Code write can swap the
// binary decides whether it is pinned. Other uses of the binary, and the
// dashboard's mode, are not the guard's step.
func TestRunStepRecognised(t *testing.T) {
	for _, c := range []struct {
		run, mode string
		guard     bool
		pinned    bool
		why       string
	}{
		{"gns-guard action", "", true, true, "runs gns-guard installed on the runner's host"},
		{"gns-guard", "", true, true, "installed on the runner's host"},
		{"set -e\nexec '/opt/gns guard/gns-guard' action", "", true, true, "/opt/gns guard/gns-guard installed"},
		{`"$HOME/go/bin/gns-guard" action`, "", true, true, "installed on the runner's host"},
		{"echo start && GNS_X=1 gns-guard action # judge", "", true, true, ""},
		{"./bin/gns-guard action", "", true, false, "from the job's work directory"},
		{"go run github.com/gns-guard/gns-guard/cmd/gns-guard@v1.4.0 action", "", true, true, "a version the Go checksum database fixes"},
		{"go run -trimpath github.com/gns-guard/gns-guard/cmd/gns-guard@latest action", "", true, false, "name a version"},
		{"go run ./cmd/gns-guard action", "", true, false, "from the job's work directory"},
		{"go run ./cmd/gns-guard \\\n  action", "", true, false, ""},
		{"gns-guard action", "dashboard", false, false, ""},
		{"gns-guard action", "issue", true, true, ""},
		{"gns-guard status --repo a/b", "", false, false, ""},
		{"gns-guard --version", "", false, false, ""},
		{"echo gns-guard action", "", false, false, ""},
		{"go run ./cmd/other action", "", false, false, ""},
	} {
		st := wfStep{Run: c.run, Env: map[string]any{"INPUT_LEDGER-KEY": "${{ secrets.K }}"}}
		if c.mode != "" {
			st.Env["INPUT_MODE"] = c.mode
		}
		if got := isGuardStep(st); got != c.guard {
			t.Errorf("%q (mode %q): the guard's step %v, want %v", c.run, c.mode, got, c.guard)
			continue
		}
		if !c.guard {
			continue
		}
		pinned, why := (&guardWorkflow{step: st}).pinned()
		if pinned != c.pinned || !strings.Contains(why, c.why) {
			t.Errorf("%q: pinned %v, %q; want %v, %q", c.run, pinned, why, c.pinned, c.why)
		}
	}
}

// RunsGuard finds the guard in any mode and either form, for the
// dashboard's note on a disabled workflow.
func TestRunsGuard(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{string(template(t)), true},
		{string(hostTemplate(t)), true},
		{"jobs:\n  d:\n    steps:\n      - run: gns-guard action\n        env:\n          INPUT_MODE: dashboard\n", true},
		{"jobs:\n  d:\n    steps:\n      - uses: actions/checkout@v4\n      - run: make test\n", false},
		{"jobs: [", false},
	} {
		if got := RunsGuard([]byte(c.text)); got != c.want {
			t.Errorf("RunsGuard = %v, want %v:\n%s", got, c.want, c.text)
		}
	}
}
