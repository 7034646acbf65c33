package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/testkit/golden"

	"github.com/gns-guard/gns-guard/internal/prune"
)

// update (go test -update) is declared in cli_test.go.

const pruneGoldenDir = "../../testdata/prune"

// testEnv returns an Env reading files from disk, with fixed time and
// environment.
func pruneTestEnv(vars map[string]string) (Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return Env{
		Stdin:    strings.NewReader(""),
		Stdout:   &out,
		Stderr:   &errOut,
		Getenv:   func(k string) string { return vars[k] },
		ReadFile: os.ReadFile,
		AppendFile: func(string, []byte) error {
			return nil
		},
		Now: func() time.Time { return time.Date(2026, 5, 17, 8, 0, 0, 0, time.UTC) },
	}, &out, &errOut
}

// TestPruneGolden runs `gns-guard prune <case>.md` over testdata/prune and
// compares standard output with <case>.golden (go test -update rewrites
// them). Cases named invalid-* must exit 1, the others 0.
func TestPruneGolden(t *testing.T) {
	cases, err := filepath.Glob(filepath.Join(pruneGoldenDir, "*.md"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases in %s: %v", pruneGoldenDir, err)
	}
	for _, in := range cases {
		name := strings.TrimSuffix(filepath.Base(in), ".md")
		t.Run(name, func(t *testing.T) {
			env, out, errOut := pruneTestEnv(nil)
			code := Main(context.Background(), []string{"prune", in, "--now", "2026-05-17T08:00:00Z"}, env)
			want := exitcode.Clean
			if strings.HasPrefix(name, "invalid-") {
				want = exitcode.Violation
			}
			if code != want {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, want, errOut)
			}
			golden.Check(t, strings.TrimSuffix(in, ".md")+".golden", out.String(), "go test ./internal/cli -run TestPrune -update")
			if want == exitcode.Clean {
				checkPruneOutput(t, in, out.String())
			}
		})
	}
}

// checkPruneOutput checks the text form: the body, then archives that parse
// and verify.
func checkPruneOutput(t *testing.T, in, out string) {
	t.Helper()
	chunks := strings.Split(out, "\n--- archive part ")
	var parts []*prune.Archive
	for i, c := range chunks[1:] {
		_, body, ok := strings.Cut(c, " ---\n")
		if !ok {
			t.Fatalf("archive %d has no separator line", i+1)
		}
		a, err := prune.ParseArchive(body)
		if err != nil {
			t.Fatalf("archive %d: %v", i+1, err)
		}
		parts = append(parts, a)
	}
	if len(parts) > 0 {
		if err := prune.Verify(parts); err != nil {
			t.Error(err)
		}
	}
	src, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(src), "\r\n") && !strings.Contains(chunks[0], "\r\n") {
		t.Error("a CRLF body lost its line ends")
	}
}

func TestPruneJSON(t *testing.T) {
	env, out, errOut := pruneTestEnv(nil)
	in := filepath.Join(pruneGoldenDir, "history-full.md")
	if code := Main(context.Background(), []string{"prune", "--format", "json", in, "--carryover-ratio", "0.25", "--phase-grant", "100", "--history-tail", "2"}, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep pruneReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Removed != 4 || len(rep.Archives) != 1 || len(rep.SHA256) != 64 || rep.Grew || rep.NewBytes >= rep.OldBytes {
		t.Errorf("report: %+v", rep)
	}
	if rep.NewBudget != (prune.Budget{Total: 2999/4 + 100, Remaining: 2999/4 + 100}) {
		t.Errorf("new budget %+v", rep.NewBudget)
	}
	if !strings.Contains(rep.Body, "2026-05-17T08:00:00Z") {
		t.Error("--now default is not env.Now")
	}
}

func TestPruneUsage(t *testing.T) {
	in := filepath.Join(pruneGoldenDir, "history-full.md")
	for _, args := range [][]string{
		{"prune"},
		{"prune", in, in},
		{"prune", in, "--format", "yaml"},
		{"prune", in, "--carryover-ratio", "2"},
		{"prune", in, "--phase-grant", "-5"},
		{"prune", in, "--history-tail", "0"},
		{"prune", in, "--now", "yesterday"},
		{"prune", "/nonexistent/body.md"},
	} {
		env, _, errOut := pruneTestEnv(nil)
		if code := Main(context.Background(), args, env); code != exitcode.Usage {
			t.Errorf("%q: exit %d, want 2; stderr %s", args, code, errOut)
		}
	}
}

func TestPruneInActions(t *testing.T) {
	// Inside Actions the body is fenced off from the runner's commands.
	env, out, _ := pruneTestEnv(map[string]string{"GITHUB_ACTIONS": "true"})
	in := filepath.Join(pruneGoldenDir, "hostile.md")
	if code := Main(context.Background(), []string{"prune", in}, env); code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	first, last := lines[0], lines[len(lines)-1]
	token, ok := strings.CutPrefix(first, "::stop-commands::")
	if !ok || len(token) < 32 || last != "::"+token+"::" {
		t.Errorf("not fenced: first %q, last %q", first, last)
	}
	if !strings.Contains(out.String(), "\n::set-env name=EVIL::1\n") {
		t.Error("the body is not printed")
	}
}
