package cli

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/setup"
)

// The README's commands are the ones a new user types first: each
// gns-guard command it shows names a verb of the verb table and flags that
// verb declares, and the Quickstart's output is what the command prints.
func TestREADMECommands(t *testing.T) {
	readme := readTestdata(t, "README.md")
	var cmds []string
	inFence := false
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			if c, ok := strings.CutPrefix(strings.TrimSpace(line), "gns-guard "); ok && !strings.Contains(c, "→") {
				cmds = append(cmds, c)
			}
			continue
		}
		for _, m := range regexp.MustCompile("`gns-guard ([^`]+)`").FindAllStringSubmatch(line, -1) {
			cmds = append(cmds, m[1])
		}
	}
	// A command continued on the next lines (`\`) or wrapped in prose is
	// checked as far as it goes.
	t.Logf("%d gns-guard commands in the README", len(cmds))
	if len(cmds) < 4 {
		t.Fatalf("found %d gns-guard commands in the README: %q", len(cmds), cmds)
	}
	for _, c := range cmds {
		fields := strings.Fields(strings.TrimSuffix(c, "\\"))
		v, ok := verbNamed(fields[0])
		if !ok {
			t.Errorf("README: `gns-guard %s`: no verb %q", c, fields[0])
			continue
		}
		fs := flag.NewFlagSet(v.name, flag.ContinueOnError)
		if v.flags != nil {
			v.flags(fs)
		}
		for _, f := range fields[1:] {
			name, ok := strings.CutPrefix(f, "--")
			if !ok {
				continue
			}
			name, _, _ = strings.Cut(name, "=")
			if fs.Lookup(name) == nil {
				t.Errorf("README: `gns-guard %s`: %s takes no flag --%s", c, v.name, name)
			}
		}
	}

	// The Quickstart: the command, then its output in the next fence.
	const quick = "go run ./cmd/gns-guard check examples/issues/depth-exceeded.md"
	_, after, ok := strings.Cut(readme, quick+"\n```\n")
	if !ok {
		t.Fatalf("the README's Quickstart lacks %q", quick)
	}
	_, shown, _ := strings.Cut(after, "```\n")
	shown, _, _ = strings.Cut(shown, "```\n")
	root := filepath.Join("..", "..")
	body, err := os.ReadFile(filepath.Join(root, "examples/issues/depth-exceeded.md"))
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, map[string]string{"examples/issues/depth-exceeded.md": string(body)}, "", "check", "examples/issues/depth-exceeded.md")
	if code != 1 || stdout+stderr != shown {
		t.Errorf("the Quickstart shows\n%s\nthe command prints (exit %d)\n%s%s", shown, code, stdout, stderr)
	}
}

// The README's labels step does not send a person to create by hand the
// labels `init` (step 3) has created: it names them as created, every one
// of them.
func TestREADMELabelsStep(t *testing.T) {
	readme := readTestdata(t, "README.md")
	start := strings.Index(readme, "\n5. ")
	end := strings.Index(readme, "\n6. ")
	if start < 0 || end < start {
		t.Fatal("the README has no steps 5 and 6")
	}
	step := readme[start:end]
	if strings.Contains(step, "Create the labels") || !strings.Contains(step, "`init` ran: it creates every label") {
		t.Errorf("step 5 asks for labels init creates:\n%s", step)
	}
	for _, l := range setup.Labels() {
		if strings.HasSuffix(l.Name, "-n") || strings.Contains(step, "`"+l.Name+"`") || strings.Contains(l.Name, "depth-") {
			continue
		}
		t.Errorf("step 5 does not name %s, which init creates", l.Name)
	}
}

// The README's command that runs every test is the one CONTRIBUTING shows
// and .ci/run runs, word for word.
func TestREADMETestCommand(t *testing.T) {
	readme := readTestdata(t, "README.md")
	_, after, ok := strings.Cut(readme, "Run every test, the real-Gitea ones included:\n\n```sh\n")
	if !ok {
		t.Fatal("the README does not show the command that runs every test")
	}
	cmd, _, _ := strings.Cut(after, "\n")
	if !strings.Contains(cmd, "GNS_GUARD_INTEGRATION=1 go test ") {
		t.Fatalf("the README's test command is %q", cmd)
	}
	for _, file := range []string{"CONTRIBUTING.md", ".ci/run"} {
		if !strings.Contains(readTestdata(t, file), cmd+"\n") && !strings.Contains(readTestdata(t, file), cmd+" ") {
			t.Errorf("%s does not run the README's test command %q", file, cmd)
		}
	}
}
