package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentScriptPortable runs examples/agent/agent.sh under every POSIX
// shell at hand with a stand-in gns-guard and a wc that pads its count with
// blanks as BSD wc does: the script must pass a bare number to --consumed.
// It also checks the syntax (sh -n) and, when shellcheck is installed,
// lints it as POSIX sh.
func TestAgentScriptPortable(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "..", "examples", "agent", "agent.sh"))
	if err != nil {
		t.Fatal(err)
	}
	realWC, err := exec.LookPath("wc")
	if err != nil {
		t.Skip("no wc")
	}
	var shells [][]string
	for _, sh := range [][]string{{"sh"}, {"dash"}, {"busybox", "sh"}} {
		if _, err := exec.LookPath(sh[0]); err == nil {
			shells = append(shells, sh)
		}
	}
	if len(shells) == 0 {
		t.Skip("no POSIX shell")
	}
	if out, err := exec.Command("sh", "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("sh -n: %v\n%s", err, out)
	}
	if _, err := exec.LookPath("shellcheck"); err == nil {
		if out, err := exec.Command("shellcheck", "-s", "sh", script).CombinedOutput(); err != nil {
			t.Errorf("shellcheck: %v\n%s", err, out)
		}
	}

	bin := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// gns-guard records its arguments, one call a line; context writes a
	// 19-byte entry load, and its JSON the room for the next estimate;
	// report exits $REPORT_EXIT.
	write("gns-guard", `#!/bin/sh
printf '%s\n' "$*" >>"$CALLS"
case "$*" in
"context "*"--format json"*) printf '{\n  "fits": true,\n  "next_estimate": {\n    "budget_remaining": 1019,\n    "pressure_room": 3000,\n    "most": 509,\n    "phase_ends_at": %s,\n    "carryover_ratio": 0.3,\n    "phase_grant": 40\n  }\n}\n' "${PHASE_ENDS_AT:-100}" ;;
"context "*) printf 'the entry load....\n' ;;
"report "*) exit "${REPORT_EXIT:-0}" ;;
esac
exit 0
`)
	write("wc", "#!/bin/sh\nprintf '%8s\\n' \"$("+realWC+" \"$@\")\"\n")

	for _, sh := range shells {
		t.Run(strings.Join(sh, " "), func(t *testing.T) {
			work := t.TempDir()
			calls := filepath.Join(work, "calls")
			env := []string{
				"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
				"GITHUB_SERVER_URL=http://gitea.invalid", "GITEA_TOKEN=t", "REPO=acme/api", "ISSUE=42",
				"WORKDIR=" + work, "CALLS=" + calls,
			}
			cmd := exec.Command(sh[0], append(sh[1:], script)...)
			cmd.Env = env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			data, err := os.ReadFile(calls)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			if len(lines) != 3 || !strings.HasPrefix(lines[0], "context ") || !strings.HasSuffix(lines[1], " --format json") || !strings.HasPrefix(lines[2], "report ") {
				t.Fatalf("calls:\n%s", data)
			}
			report := lines[2]
			if !strings.Contains(report, " --consumed 19 ") {
				t.Errorf("--consumed is not a bare number: %s", report)
			}
			if !strings.Contains(report, " --invocation lead-developer-") {
				t.Errorf("no default invocation: %s", report)
			}
			// Half the budget left after this call ((1019 - 19) / 2) is
			// less than half the pressure room (3000 / 2).
			if !strings.Contains(report, " --next-estimate 500 ") {
				t.Errorf("the next estimate is not taken from context's room: %s", report)
			}
			// This call's 19 tokens end the phase: the next call has the
			// new phase's budget, floor((1019 - 19) × 0.3) + 40 = 340,
			// and may take half of it.
			if err := os.Remove(calls); err != nil {
				t.Fatal(err)
			}
			cmd = exec.Command(sh[0], append(sh[1:], script)...)
			cmd.Env = append(env, "PHASE_ENDS_AT=19")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if data, _ = os.ReadFile(calls); !strings.Contains(string(data), " --next-estimate 170 ") {
				t.Errorf("the next estimate does not take the new phase's budget: %s", data)
			}
			if strings.Contains(string(data), "--guard-user") {
				t.Errorf("--guard-user given without GUARD_USER:\n%s", data)
			}

			// A usage error is not retried.
			if err := os.Remove(calls); err != nil {
				t.Fatal(err)
			}
			cmd = exec.Command(sh[0], append(sh[1:], script)...)
			cmd.Env = append(env, "REPORT_EXIT=2", "NEXT_ESTIMATE=700")
			out, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
				t.Fatalf("report exit 2: agent.sh ended with %v\n%s", err, out)
			}
			data, _ = os.ReadFile(calls)
			if n := strings.Count(string(data), "report "); n != 1 || strings.Contains(string(data), "--format json") || !strings.Contains(string(data), " --next-estimate 700 ") {
				t.Errorf("with NEXT_ESTIMATE set and report exiting 2, calls:\n%s", data)
			}
		})
	}
}

// agent.sh takes what the model did from its environment: the action,
// the consumption, the verdict, the labels, a result file; an empty
// variable leaves its flag out.
func TestAgentScriptTakesTheWorkFromItsEnvironment(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "..", "examples", "agent", "agent.sh"))
	if err != nil {
		t.Fatal(err)
	}
	bin, work := t.TempDir(), t.TempDir()
	calls := filepath.Join(work, "calls")
	stub := "#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\" >>\"$CALLS\"; done\necho >>\"$CALLS\"\n"
	if err := os.WriteFile(filepath.Join(bin, "gns-guard"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", script)
	cmd.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"GITHUB_SERVER_URL=http://gitea.invalid", "GITEA_TOKEN=t", "REPO=acme/api", "ISSUE=42", "WORKDIR=" + work, "CALLS=" + calls,
		"NEXT_ESTIMATE=900", "CONSUMED=4321", "ACTION=reviewed the limiter: two findings", "VERDICT=changes-requested",
		"FILES_CHANGED=", "KEY_STATS=", "LABELS_ADD=phase::implementation", "LABELS_REMOVE=phase::review", "RESULT_FILE=review.md"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	data, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	report := strings.Split(strings.TrimSpace(string(data)), "\n")[1]
	for _, want := range []string{"[--consumed][4321]", "[--action][reviewed the limiter: two findings]", "[--verdict][changes-requested]",
		"[--labels-add][phase::implementation]", "[--labels-remove][phase::review]", "[--result-file][review.md]", "[--next-estimate][900]"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %s: %s", want, report)
		}
	}
	for _, unwanted := range []string{"--files-changed", "--key-stats", "rate limiter"} {
		if strings.Contains(report, unwanted) {
			t.Errorf("report has %s, which the environment left out: %s", unwanted, report)
		}
	}
}
