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
	// 19-byte entry load.
	write("gns-guard", "#!/bin/sh\nprintf '%s\\n' \"$*\" >>\"$CALLS\"\n[ \"$1\" = context ] && printf 'the entry load....\\n'\nexit 0\n")
	write("wc", "#!/bin/sh\nprintf '%8s\\n' \"$("+realWC+" \"$@\")\"\n")

	for _, sh := range shells {
		t.Run(strings.Join(sh, " "), func(t *testing.T) {
			work := t.TempDir()
			calls := filepath.Join(work, "calls")
			cmd := exec.Command(sh[0], append(sh[1:], script)...)
			cmd.Env = []string{
				"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
				"GITHUB_SERVER_URL=http://gitea.invalid", "GITEA_TOKEN=t", "REPO=acme/api", "ISSUE=42",
				"WORKDIR=" + work, "CALLS=" + calls,
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			data, err := os.ReadFile(calls)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			if len(lines) != 2 || !strings.HasPrefix(lines[0], "context ") || !strings.HasPrefix(lines[1], "report ") {
				t.Fatalf("calls:\n%s", data)
			}
			if !strings.Contains(lines[1], " --consumed 19 ") {
				t.Errorf("--consumed is not a bare number: %s", lines[1])
			}
			if !strings.Contains(lines[1], " --invocation lead-developer-") {
				t.Errorf("no default invocation: %s", lines[1])
			}
		})
	}
}
