package cli

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/testkit/golden"
)

// run runs the command line with files served from memory.
func runCLI(t *testing.T, files map[string]string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := Env{
		Stdin:  strings.NewReader(stdin),
		Stdout: &out,
		Stderr: &errb,
		Getenv: func(string) string { return "" },
		ReadFile: func(name string) ([]byte, error) {
			if data, ok := files[name]; ok {
				return []byte(data), nil
			}
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		},
		AppendFile: func(string, []byte) error { return nil },
		Now:        func() time.Time { return time.Date(2026, 5, 16, 14, 0, 0, 0, time.UTC) },
	}
	code = Main(context.Background(), args, env)
	return out.String(), errb.String(), code
}

// TestCheckGolden runs `check` on every body under testdata/check: cases in
// ok/ must pass, cases in err/ must fail, and the output must match the
// case's .out file. Adding a case is adding two files.
func TestCheckGolden(t *testing.T) {
	for _, dir := range []string{"ok", "err"} {
		paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "check", dir, "*"))
		if err != nil {
			t.Fatal(err)
		}
		if len(paths) < 5 {
			t.Fatalf("too few golden cases in %s", dir)
		}
		for _, path := range paths {
			if strings.HasSuffix(path, ".out") {
				continue
			}
			name := filepath.Base(path)
			t.Run(dir+"/"+name, func(t *testing.T) {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				stdout, stderr, code := runCLI(t, map[string]string{name: string(data)}, "", "check", name)
				switch {
				case dir == "ok" && code != 0:
					t.Errorf("exit %d, want 0:\n%s%s", code, stdout, stderr)
				case dir == "err" && code != 1:
					t.Errorf("exit %d, want 1:\n%s%s", code, stdout, stderr)
				}
				got := fmt.Sprintf("%s-- exit %d\n", stdout, code)
				golden.Check(t, strings.TrimSuffix(path, filepath.Ext(path))+".out", got, "go test ./internal/cli -run TestCheckGolden -update")
			})
		}
	}
}

func TestCheckJSONAndStdin(t *testing.T) {
	data, err := os.ReadFile("../../testdata/check/err/depth-exceeded.md")
	if err != nil {
		t.Fatal(err)
	}
	stdout, _, code := runCLI(t, nil, string(data), "check", "--format", "json", "-")
	if code != 1 || !strings.Contains(stdout, `"rule": "depth-exceeded"`) || !strings.Contains(stdout, `"file": "stdin"`) {
		t.Fatalf("exit %d:\n%s", code, stdout)
	}
	// Flags may follow the positional argument.
	stdout2, _, code2 := runCLI(t, nil, string(data), "check", "-", "--format", "json")
	if code2 != 1 || stdout2 != stdout {
		t.Fatalf("flags after the argument gave a different result (exit %d)", code2)
	}
}

func TestCheckLabelsFlag(t *testing.T) {
	data, err := os.ReadFile("../../testdata/check/ok/tail.md")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"b.md": string(data)}
	stdout, _, code := runCLI(t, files, "", "check", "b.md", "--labels", "cascade::depth-0,size::medium")
	if code != 1 || !strings.Contains(stdout, "[depth-exceeded]") {
		t.Fatalf("live labels were not used (exit %d):\n%s", code, stdout)
	}
}

func TestUsageErrors(t *testing.T) {
	cases := [][]string{
		{},
		{"nope"},
		{"check"},
		{"check", "a", "b"},
		{"check", "--format", "xml", "a"},
		{"check", "missing.md"},
		{"tokens", "--encoding", "p50k", "-"},
		{"schema", "extra"},
	}
	for _, args := range cases {
		_, stderr, code := runCLI(t, nil, "", args...)
		if code != exitcode.Usage {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		if !strings.Contains(stderr, "gns-guard") {
			t.Errorf("%v: no message on stderr: %q", args, stderr)
		}
	}
}

func TestTokensVerb(t *testing.T) {
	stdout, _, code := runCLI(t, nil, "hello world", "tokens", "-")
	if code != 0 || stdout != "2\n" {
		t.Fatalf("exit %d, %q", code, stdout)
	}
	stdout, _, code = runCLI(t, nil, "hello world", "tokens", "--encoding", "o200k_base", "-")
	if code != 0 || stdout != "2\n" {
		t.Fatalf("exit %d, %q", code, stdout)
	}
}

func TestSchemaVerb(t *testing.T) {
	stdout, _, code := runCLI(t, nil, "", "schema")
	if code != 0 || !strings.Contains(stdout, `"$schema": "https://json-schema.org/draft/2020-12/schema"`) || !strings.Contains(stdout, `"history_tail"`) {
		t.Fatalf("exit %d:\n%s", code, stdout)
	}
}
