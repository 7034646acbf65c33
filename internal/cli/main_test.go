package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/history"
	"github.com/gns-guard/gns-guard/internal/offline"
	"github.com/gns-guard/gns-guard/internal/version"
)

// The answers the verbs print as JSON or YAML, as the tests decode them.
type (
	checkReport  = offline.CheckReport
	pruneReport  = offline.PruneReport
	historyEntry = history.Entry
)

func readTestdata(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// prune prunes only when a trigger of the guard fires: a healthy body
// comes back unchanged (its budget too), with one line on standard error
// naming the triggers and their numbers.
func TestPruneWithoutTrigger(t *testing.T) {
	body := readTestdata(t, "examples/issues/healthy.md")
	files := map[string]string{"healthy.md": body}
	stdout, stderr, code := runCLI(t, files, "", "prune", "healthy.md")
	if code != 0 || stdout != body {
		t.Fatalf("exit %d; the body changed:\n%s", code, stdout)
	}
	for _, want := range []string{"no prune trigger fires", "consumed 6200 <= 16000 (80% of total 20000)", "history_tail 3 entries <= 6, twice history-tail 3", "overhead of a medium task"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q: %q", want, stderr)
		}
	}
	if strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr is not one line: %q", stderr)
	}

	stdout, _, code = runCLI(t, files, "", "prune", "--format", "json", "healthy.md")
	var rep pruneReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 0 {
		t.Fatalf("exit %d, %v:\n%s", code, err, stdout)
	}
	if rep.Pruned || rep.Body != body || len(rep.Archives) != 0 || rep.NewBudget != rep.Budget || rep.Budget.Total != 20000 || !strings.Contains(rep.Reason, "no prune trigger fires") {
		t.Errorf("report: %+v", rep)
	}

	// A trigger that fires prunes, and says why.
	stdout, _, code = runCLI(t, map[string]string{"b.md": readTestdata(t, "examples/issues/over-budget.md")}, "", "prune", "--format=json", "b.md")
	rep = pruneReport{}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 0 {
		t.Fatalf("exit %d, %v:\n%s", code, err, stdout)
	}
	if !rep.Pruned || !strings.Contains(rep.Reason, "consumed 17400 > 80% of total 20000") || len(rep.Archives) == 0 {
		t.Errorf("over budget: %+v", rep)
	}
}

// prune and check agree: the offline decision is the same, so prune
// prunes exactly when check plans a prune.
func TestPruneAgreesWithCheck(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "prune", "*.md"))
	more, _ := filepath.Glob(filepath.Join("..", "..", "examples", "issues", "*.md"))
	for _, path := range append(paths, more...) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]string{"b.md": string(data)}
		out, _, _ := runCLI(t, files, "", "check", "--format", "json", "b.md")
		var cr checkReport
		if err := json.Unmarshal([]byte(out), &cr); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		planned := false
		for _, w := range cr.Plan {
			planned = planned || strings.HasPrefix(w, "patch the body")
		}
		out, _, _ = runCLI(t, files, "", "prune", "--format", "json", "b.md")
		var pr pruneReport
		if err := json.Unmarshal([]byte(out), &pr); err != nil {
			t.Fatalf("%s: prune printed no JSON: %v\n%s", path, err, out)
		}
		if pr.Pruned != planned {
			t.Errorf("%s: check plans a prune: %v; prune pruned: %v (%s)", path, planned, pr.Pruned, pr.Reason)
		}
	}
}

// prune --format json is JSON on every path, the invalid checkpoint too.
func TestPruneInvalidJSON(t *testing.T) {
	files := map[string]string{"b.md": readTestdata(t, "testdata/prune/invalid-schema.md")}
	stdout, _, code := runCLI(t, files, "", "prune", "--format", "json", "b.md")
	var rep pruneReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if code != exitcode.Violation || rep.Pruned || len(rep.Findings) == 0 || rep.Reason == "" || rep.Body != files["b.md"] {
		t.Errorf("exit %d, %+v", code, rep)
	}
}

// check judges an over-long history_tail (past twice history-tail, as
// `report` leaves it) as the action does: a warning, and the prune that
// repairs it. A tail within twice history-tail is neither: archives come
// in batches.
func TestCheckTailTooLongIsRepaired(t *testing.T) {
	files := map[string]string{"b.md": readTestdata(t, "testdata/check/ok/tail-too-long.md"), "c.md": readTestdata(t, "testdata/check/ok/tail-batched.md")}
	stdout, _, code := runCLI(t, files, "", "check", "b.md")
	if code != 0 || !strings.Contains(stdout, "warning: checkpoint.history_tail: holds 7 entries, more than twice history-tail = 3 (6)") || !strings.Contains(stdout, "the action would patch the body: 4 entries archived") {
		t.Fatalf("exit %d:\n%s", code, stdout)
	}
	stdout, _, code = runCLI(t, files, "", "check", "c.md")
	if code != 0 || strings.Contains(stdout, "history-tail-length") || strings.Contains(stdout, "the action would") {
		t.Fatalf("a tail of 5 entries: exit %d:\n%s", code, stdout)
	}
}

func TestTokensJSON(t *testing.T) {
	stdout, _, code := runCLI(t, map[string]string{"a.txt": "hello world"}, "", "tokens", "a.txt", "--format", "json", "--encoding", "o200k_base")
	var got offline.TokenCount
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != 0 {
		t.Fatalf("exit %d, %v: %s", code, err, stdout)
	}
	if got != (offline.TokenCount{File: "a.txt", Encoding: "o200k_base", Tokens: 2}) {
		t.Errorf("%+v", got)
	}
	stdout, _, _ = runCLI(t, nil, "hello world", "tokens", "--format=json", "-")
	if !strings.Contains(stdout, `"file": "stdin"`) || !strings.Contains(stdout, `"encoding": "cl100k_base"`) {
		t.Errorf("%s", stdout)
	}
}

func TestVersion(t *testing.T) {
	want := version.String() + "\n"
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		stdout, stderr, code := runCLI(t, nil, "", args...)
		if code != 0 || stdout != want || stderr != "" {
			t.Errorf("%v: exit %d, %q, %q", args, code, stdout, stderr)
		}
	}
	stdout, _, code := runCLI(t, nil, "", "--version", "--format", "json")
	var got version.Build
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != 0 || got != version.Info() {
		t.Errorf("exit %d, %v: %s", code, err, stdout)
	}
	if _, stderr, code := runCLI(t, nil, "", "version", "extra"); code != exitcode.Usage || !strings.Contains(stderr, "Run 'gns-guard version -h' for usage.") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// A usage error is one line, then one hint line; -h prints the full help.
func TestUsageErrorIsOneLine(t *testing.T) {
	for _, c := range []struct {
		args       []string
		line, hint string
	}{
		{[]string{"check", "-x", "a.md"}, "gns-guard: check: unknown flag -x", "Run 'gns-guard check -h' for usage."},
		{[]string{"prune", "--now"}, "gns-guard: prune: flag needs an argument: --now", "Run 'gns-guard prune -h' for usage."},
		{[]string{"check", "--history-tail", "0", "a.md"}, `gns-guard: check: --history-tail: expected a whole number >= 1, got "0"`, "Run 'gns-guard check -h' for usage."},
		{[]string{"report", "--bogus"}, "gns-guard: report: unknown flag --bogus", "Run 'gns-guard report -h' for usage."},
		{[]string{"tokens", "--format", "xml", "-"}, `gns-guard: tokens: --format must be text or json, not "xml"`, "Run 'gns-guard tokens -h' for usage."},
		{[]string{"nope"}, `gns-guard: unknown verb "nope"; the verbs are check, prune, history, tokens, context, report, spawn, recover, status, mcp, init, doctor, keygen, pubkey, schema, rules, version, meter, action`, "Run 'gns-guard -h' for usage."},
		{nil, "gns-guard: no verb given; the verbs are check, prune, history, tokens, context, report, spawn, recover, status, mcp, init, doctor, keygen, pubkey, schema, rules, version, meter, action", "Run 'gns-guard -h' for usage."},
	} {
		stdout, stderr, code := runCLI(t, nil, "", c.args...)
		if want := c.line + "\n" + c.hint + "\n"; code != exitcode.Usage || stdout != "" || stderr != want {
			t.Errorf("%q: exit %d\nstdout %q\nstderr %q\nwant   %q", c.args, code, stdout, stderr, want)
		}
	}
}

// -h prints every flag, with the defaults a user would pass and without
// the sentinels that mean "not given".
func TestHelp(t *testing.T) {
	stdout, stderr, code := runCLI(t, nil, "", "report", "-h")
	if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "Usage: gns-guard report ") {
		t.Fatalf("exit %d:\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"  --consumed TOKENS   (required)\n", `--status ok|failed`, `(default "ok")`, "(default 0.8)", "(default 3)", "  --dry-run\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, stdout)
		}
	}
	for _, bad := range []string{"(default -1)", `(default "")`, "(default false)"} {
		if strings.Contains(stdout, bad) {
			t.Errorf("help shows a sentinel %s:\n%s", bad, stdout)
		}
	}
	check, _, _ := runCLI(t, nil, "", "help", "check")
	if !strings.Contains(check, "Usage: gns-guard check ") || !strings.Contains(check, `(default "text")`) {
		t.Errorf("help check:\n%s", check)
	}
	top, _, code := runCLI(t, nil, "", "-h")
	if code != 0 || !strings.Contains(top, "gns-guard version") {
		t.Errorf("exit %d:\n%s", code, top)
	}
}

// Under --format json an error is one JSON object on standard output,
// with the exit code it always has; violations keep their report.
func TestJSONErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		kind string
		msg  string
	}{
		{[]string{"check", "--format", "json", "-x", "a.md"}, exitcode.Usage, "usage", "check: unknown flag -x"},
		{[]string{"check", "--format=json"}, exitcode.Usage, "usage", "check needs a FILE (or - for standard input)"},
		{[]string{"check", "--format", "json", "missing.md"}, exitcode.Usage, "usage", "cannot read missing.md"},
		{[]string{"tokens", "--format", "json", "--encoding", "p50k", "-"}, exitcode.Usage, "usage", "tokens: "},
		{[]string{"nope", "--format", "json"}, exitcode.Usage, "usage", `unknown verb "nope"`},
		{[]string{"rules", "--format", "json", "extra"}, exitcode.Usage, "usage", "rules takes no arguments"},
		{[]string{"schema", "--format", "json", "--history-tail", "0"}, exitcode.Usage, "usage", "schema: --history-tail must be positive"},
		{[]string{"version", "--format", "json", "x"}, exitcode.Usage, "usage", "version takes no arguments"},
		{[]string{"history", "--format", "json", "--repo", "a/b", "--issue", "1", "--server", "http://127.0.0.1:1", "--token", "t"}, exitcode.CannotRun, "cannot-run", "history: "},
		{[]string{"report", "--format", "json"}, exitcode.Usage, "usage", "report: "},
		{[]string{"recover", "--format", "json"}, exitcode.Usage, "usage", "recover: "},
		{[]string{"context", "--format", "json"}, exitcode.Usage, "usage", "context"},
	} {
		stdout, stderr, code := runCLI(t, nil, "", c.args...)
		var got exitcode.JSONError
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Errorf("%q: not JSON (%v): %q (stderr %q)", c.args, err, stdout, stderr)
			continue
		}
		if code != c.code || got.Error.ExitCode != c.code || got.Error.Kind != c.kind || !strings.Contains(got.Error.Message, c.msg) || strings.Count(stdout, "\n") != 1 {
			t.Errorf("%q: exit %d, %s", c.args, code, stdout)
		}
	}
	// Violations print their own report, not an error object.
	data := readTestdata(t, "testdata/check/err/depth-exceeded.md")
	stdout, _, code := runCLI(t, nil, data, "check", "-", "--format", "json")
	if code != exitcode.Violation || !strings.Contains(stdout, `"valid": false`) || strings.Contains(stdout, `{"error":`) {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}

// A named file is read at most maxInput+1 bytes: /dev/zero is refused as
// too large, at once, and a fake huge file too.
func TestReadFileIsCapped(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	start := time.Now()
	_, err := System().ReadFile("/dev/zero")
	if !errors.Is(err, errTooLarge) {
		t.Fatalf("ReadFile(/dev/zero): %v", err)
	}
	var out, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" },
		ReadFile: System().ReadFile, Now: time.Now}
	for _, verb := range []string{"check", "prune", "tokens"} {
		out.Reset()
		errb.Reset()
		if code := Main(context.Background(), []string{verb, "/dev/zero"}, env); code != exitcode.Usage || !strings.Contains(errb.String(), "/dev/zero is over 32 MiB") {
			t.Errorf("%s: exit %d, %q", verb, code, errb.String())
		}
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
	// A file just at the cap is read whole.
	path := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(path, bytes.Repeat([]byte{'a'}, maxInput), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := System().ReadFile(path); err != nil || len(data) != maxInput {
		t.Errorf("at the cap: %d bytes, %v", len(data), err)
	}
	if err := os.WriteFile(path, bytes.Repeat([]byte{'a'}, maxInput+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := System().ReadFile(path); !errors.Is(err, errTooLarge) {
		t.Errorf("over the cap: %v", err)
	}
}

// Nothing on the command line or in a file makes the program panic: every
// outcome is an exit code of the table.
func TestHostileInput(t *testing.T) {
	junk := string([]byte{0, 0xff, 0xfe, '`', '`', '`', 'y', 'a', 'm', 'l', '\n', 0x80, '\n', '`', '`', '`'})
	files := map[string]string{
		"empty.md":  "",
		"junk.bin":  junk,
		"nl.md":     "\n\n\n",
		"fence.md":  "```yaml\n",
		"huge.md":   "```yaml\ncheckpoint:\n  version: 99999999999999999999999999\n  issue: 9223372036854775807\n  depth: 9223372036854775807\n  budget: {total: 9223372036854775807, consumed: -9223372036854775808, remaining: 9223372036854775807}\n  next_estimated_tokens: 9223372036854775807\n  history_tail: [{agent: a, action: b, timestamp: \"9999-99-99\"}]\n```\n",
		"max.md":    "```yaml\ncheckpoint:\n  version: 2\n  issue: 1\n  phase: p\n  depth: 0\n  last_agent: a\n  last_invocation: i\n  budget: {total: 9223372036854775807, consumed: 9223372036854775807, remaining: 0}\n  state: {labels: [\"cascade::depth-9223372036854775807\", \"size::huge\"], assignee: a}\n  history: [{agent: a, action: b}, {agent: a, action: c}, {agent: a, action: d}, {agent: a, action: e}]\n  next_agent: b\n  next_estimated_tokens: 9223372036854775807\n  created_at: 2026-01-01T00:00:00Z\n```\n",
		"alias.md":  "```yaml\ncheckpoint: &a [*a, *a]\n```\n",
		"nested.md": "```yaml\ncheckpoint:\n" + strings.Repeat("  ", 1) + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "\n```\n",
		"ok.md":     readTestdata(t, "examples/issues/over-budget.md"),
		"tail.md":   readTestdata(t, "testdata/check/ok/tail-too-long.md"),
	}
	names := []string{"empty.md", "junk.bin", "nl.md", "fence.md", "huge.md", "max.md", "alias.md", "nested.md", "ok.md", "tail.md", "missing.md", "-", "", "--"}
	argLists := [][]string{
		{}, {""}, {"-"}, {"--"}, {"-h"}, {"help", "nope"}, {"help", "action"}, {"--format"}, {"--format", "json"}, {"--version", "--format", "junk"},
		{"nope", "--format=json"}, {"check", "--format"}, {"check", "--format", "\x00"}, {"rules", "--format", "json", "--format", "yaml"},
		{"check", "--issue", "99999999999999999999"}, {"check", "--issue", "-1", "ok.md"}, {"check", "--labels", ",,,", "ok.md"},
		{"check", "--history-tail", "9223372036854775807", "ok.md"}, {"check", "--max-checkpoint-bytes", "1", "ok.md"},
		{"check", "--default-max-depth", "-5", "ok.md"}, {"check", "--default-max-depth", "99999999999999999999", "ok.md"},
		{"prune", "--phase-grant", "9223372036854775807", "ok.md"}, {"prune", "--carryover-ratio", "NaN", "ok.md"},
		{"prune", "--prune-threshold", "1e-300", "ok.md"}, {"prune", "--history-tail", "1", "--format", "json", "max.md"},
		{"prune", "--now", "0000-01-01T00:00:00Z", "ok.md"}, {"prune", "--labels", "size::large,cascade::depth-n", "max.md"},
		{"tokens", "--encoding", "", "junk.bin"}, {"schema", "--history-tail", "-1"}, {"schema", "--history-tail", "9223372036854775807"},
		{"history"}, {"history", "--repo", "/", "--issue", "-9"}, {"history", "--repo", "a/b", "--issue", "1", "--format", "json"},
		{"context"}, {"context", "--body", "junk.bin"}, {"context", "--body", "huge.md", "--format", "json"}, {"context", "--body", "ok.md", "--cap", "-1"},
		{"context", "--body", "max.md", "--cap", "9223372036854775807"}, {"context", "--body", "ok.md", "--comments", "junk.bin"},
		{"context", "--body", "ok.md", "--file", "junk.bin", "--file", "empty.md"}, {"context", "--body", "ok.md", "--size", "huge"},
		{"report"}, {"report", "--consumed", "-9223372036854775808", "--format", "json"}, {"recover", "--issue", "0"},
	}
	for _, verb := range []string{"check", "prune", "tokens", "schema", "rules", "version"} {
		for _, name := range names {
			argLists = append(argLists, []string{verb, name}, []string{verb, name, "--format", "json"})
		}
	}
	for _, args := range argLists {
		for _, stdin := range []string{"", junk} {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%q: panic: %v", args, r)
					}
				}()
				stdout, stderr, code := runCLI(t, files, stdin, args...)
				if code < 0 || code > 3 {
					t.Errorf("%q: exit %d", args, code)
				}
				if strings.Contains(stderr, "internal error") {
					t.Errorf("%q: %s", args, stderr)
				}
				if wantsJSON(args) && code != 0 && code != exitcode.Violation && !json.Valid([]byte(stdout)) {
					t.Errorf("%q: exit %d, not JSON: %q", args, code, stdout)
				}
			}()
		}
	}
}

// A panic that escapes a verb is a bug: Main still ends with an exit code
// of the table (3, could not run), says so, and under --format json
// answers with the error object.
func TestMainRecoversPanic(t *testing.T) {
	var out, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Now: time.Now, Getenv: func(string) string { return "" },
		ReadFile: func(string) ([]byte, error) { panic("boom") }}
	if code := Main(context.Background(), []string{"check", "--format", "json", "a.md"}, env); code != exitcode.CannotRun {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(errb.String(), "internal error: boom") || !strings.HasPrefix(out.String(), `{"error":{"exit_code":3,"kind":"cannot-run"`) {
		t.Errorf("stdout %q\nstderr %q", out.String(), errb.String())
	}
}
