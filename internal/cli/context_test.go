package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/briefing"
	"github.com/gns-guard/gns-guard/internal/entryload"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/testkit/golden"

	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

var contextGoldenDir = filepath.Join("..", "..", "testdata", "context")

// contextRun is one run of `context` with files from memory or a folder.
type contextRun struct {
	stdout, stderr string
	code           int
	appended       map[string]string
}

// runContextCLI runs `context` with args; files are read through read,
// appends are captured, and the default overflow folder does not exist.
func runContextCLI(t *testing.T, read func(string) ([]byte, error), vars map[string]string, args ...string) contextRun {
	t.Helper()
	old := dirExists
	t.Cleanup(func() { dirExists = old })
	dirExists = func(string) bool { return false }
	var out, errb bytes.Buffer
	r := contextRun{appended: map[string]string{}}
	env := Env{
		Stdin:    strings.NewReader(""),
		Stdout:   &out,
		Stderr:   &errb,
		Getenv:   func(k string) string { return vars[k] },
		ReadFile: read,
		AppendFile: func(name string, data []byte) error {
			r.appended[name] += string(data)
			return nil
		},
		Now: func() time.Time { return time.Date(2026, 5, 16, 14, 0, 0, 0, time.UTC) },
	}
	r.code = Main(context.Background(), append([]string{"context"}, args...), env)
	r.stdout, r.stderr = out.String(), errb.String()
	return r
}

func (r contextRun) String() string {
	var b strings.Builder
	b.WriteString(r.stdout)
	if r.stderr != "" {
		b.WriteString("-- stderr\n" + r.stderr)
	}
	names := make([]string, 0, len(r.appended))
	for n := range r.appended {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "-- appended to %s\n%s", n, r.appended[n])
	}
	fmt.Fprintf(&b, "-- exit %d\n", r.code)
	return b.String()
}

// TestContextGolden runs `context` on every case under testdata/context:
// a folder with an args file (the flags, split on white space) and the
// files they name; a file the case lacks is taken from shared/. The output
// (stdout, stderr, appended lines, exit code) must match the case's
// out.golden. Adding a case is adding a folder; run
// go test ./internal/cli -run TestContextGolden -update to write its golden.
func TestContextGolden(t *testing.T) {
	dirs, err := os.ReadDir(contextGoldenDir)
	if err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(contextGoldenDir, "shared")
	cases := 0
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == "shared" {
			continue
		}
		cases++
		dir := filepath.Join(contextGoldenDir, d.Name())
		t.Run(d.Name(), func(t *testing.T) {
			args, err := os.ReadFile(filepath.Join(dir, "args"))
			if err != nil {
				t.Fatal(err)
			}
			read := func(name string) ([]byte, error) {
				if filepath.IsAbs(name) || strings.Contains(name, "..") {
					return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
				}
				data, err := os.ReadFile(filepath.Join(dir, name))
				if errors.Is(err, fs.ErrNotExist) {
					data, err = os.ReadFile(filepath.Join(shared, name))
				}
				if err != nil {
					return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
				}
				return data, nil
			}
			r := runContextCLI(t, read, nil, strings.Fields(string(args))...)
			if r.code == exitcode.Clean {
				checkUnderCap(t, r.stdout, args)
			}
			got := r.String()
			golden.Check(t, filepath.Join(dir, "out.golden"), got, "go test ./internal/cli -run TestContextGolden -update")
		})
	}
	if cases < 10 {
		t.Fatalf("only %d golden cases", cases)
	}
}

// checkUnderCap checks a text load against the cap its footer states.
func checkUnderCap(t *testing.T, out string, args []byte) {
	t.Helper()
	if strings.Contains(string(args), "--format json") {
		return
	}
	var loaded, capTokens int
	i := strings.LastIndex(out, "\n---\nLoaded ")
	if i < 0 {
		t.Fatalf("no footer:\n%s", out)
	}
	if _, err := fmt.Sscanf(strings.ReplaceAll(out[i+len("\n---\nLoaded "):], ",", ""), "%d of %d tokens", &loaded, &capTokens); err != nil {
		t.Fatal(err)
	}
	c, err := tokens.New(tokens.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Count(out); n != loaded || n > capTokens {
		t.Errorf("printed %d tokens, the footer says %d of %d", n, loaded, capTokens)
	}
}

// memFiles serves files from a map.
func memFiles(files map[string]string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		if data, ok := files[name]; ok {
			return []byte(data), nil
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
}

func sharedFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(contextGoldenDir, "shared", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestContextHostileSizes feeds what no golden file should hold: a 3 MB
// file, a huge comment, a huge skill line. Clear errors or a load under
// the cap, never a panic.
func TestContextHostileSizes(t *testing.T) {
	body := sharedFile(t, "body.md")
	huge := strings.Repeat("A comment that goes on and on. ", 100_000) // 3 MB
	files := map[string]string{
		"body.md":     body,
		"big.log":     strings.Repeat("2026-05-16 13:20:00 INFO request served\n", 80_000), // 3.2 MB
		"comments":    fmt.Sprintf(`[{"id": 1, "author": "a", "body": %q}, {"id": 2, "author": "b", "body": "short"}]`, huge),
		"one-line.js": strings.Repeat("var a=1;", 60_000), // 480 KB on one line
	}
	r := runContextCLI(t, memFiles(files), nil, "--body", "body.md", "--file", "big.log")
	if r.code != exitcode.Usage || !strings.Contains(r.stderr, "the file big.log is 3,200,000 bytes, over the 1 MiB a load reads") {
		t.Errorf("3 MB file: %s", r)
	}
	r = runContextCLI(t, memFiles(files), nil, "--body", "body.md", "--comments", "comments", "--file", "one-line.js")
	if r.code != exitcode.Clean {
		t.Fatalf("huge comment: %s", r)
	}
	for _, want := range []string{"- P2 Comment 1 by a: dropped, ", "- P2 Comment 2 by b: ", "- P3 File one-line.js: dropped, ", "(not even its first line)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in\n%s", want, r.stdout)
		}
	}
	checkUnderCap(t, r.stdout, nil)
}

// TestContextInsideActions checks that inside Gitea Actions the load is
// printed between stop-commands markers, and that the markers count
// against the cap too.
func TestContextInsideActions(t *testing.T) {
	files := map[string]string{"body.md": sharedFile(t, "body.md"), "comments.json": sharedFile(t, "comments.json"), "big": strings.Repeat("line of text\n", 5000)}
	r := runContextCLI(t, memFiles(files), map[string]string{"GITHUB_ACTIONS": "true"}, "--body", "body.md", "--comments", "comments.json", "--file", "big", "--cap", "900")
	if r.code != 0 {
		t.Fatal(r)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	token, ok := strings.CutPrefix(lines[0], "::stop-commands::")
	if !ok || lines[len(lines)-1] != "::"+token+"::" || len(token) < 20 {
		t.Fatalf("not wrapped in stop-commands:\n%s", r.stdout)
	}
	c, _ := tokens.New(tokens.CL100kBase)
	if n := c.Count(r.stdout); n > 900 || n < 850 {
		t.Errorf("printed %d tokens with the markers, cap 900", n)
	}
}

// runContextOnline runs context on the issue client f reads.
func runContextOnline(t *testing.T, f *fakeforge.Client, vars map[string]string, args ...string) contextRun {
	t.Helper()
	old := connectForge
	t.Cleanup(func() { connectForge = old })
	connectForge = func(server, token, owner, repo string) (port.Forge, error) {
		if server != vars["WANT_SERVER"] || token != vars["WANT_TOKEN"] || owner != "org" || repo != "proj" {
			return nil, fmt.Errorf("unexpected %s %s %s/%s", server, token, owner, repo)
		}
		return f, nil
	}
	return runContextCLI(t, memFiles(nil), vars, args...)
}

func TestContextOnlineFake(t *testing.T) {
	body := strings.ReplaceAll(sharedFile(t, "body.md"), "issue: 42", "issue: 7")
	srv := fakeforge.New("org/proj")
	srv.AddIssue(issues.Issue{Number: 7, Body: body, Labels: []issues.Label{{ID: 1, Name: "size::small"}}}, "alice")
	srv.Grant("alice", "write")
	for i := range 120 {
		srv.AddComment(7, issues.Comment{ID: int64(i + 1), Author: "alice", Body: fmt.Sprintf("note %d", i+1)})
	}
	srv.AddComment(7, issues.Comment{ID: 500, Author: "gitea-actions", Body: "status <!-- gns-guard:status issue=7 -->"})
	f := srv.As("alice")
	vars := map[string]string{"GITHUB_SERVER_URL": "http://gitea.test", "GITEA_TOKEN": "t1", "GITHUB_TOKEN": "t2", "WANT_SERVER": "http://gitea.test", "WANT_TOKEN": "t1"}
	r := runContextOnline(t, f, vars, "--repo", "org/proj", "--issue", "7")
	if r.code != 0 {
		t.Fatal(r)
	}
	for _, want := range []string{"## P2 Comment 118 by alice", "## P2 Comment 120 by alice", "Not loaded: the guard's own comments 500 (status).", "(small task: max context 6,000 − checkpoint overhead 800)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "Comment 117 ") {
		t.Errorf("loaded more than 3 comments:\n%s", r.stdout)
	}
	if f.Requests() != 4 {
		t.Errorf("%d requests, want 4 (the repository's configuration file, the issue, the timeline's tail, and who can write the issue: the status comment holds no record that says)", f.Requests())
	}

	for _, tt := range []struct {
		name string
		err  error
		args []string
		vars map[string]string
		code int
		msg  string
	}{
		{name: "no issue", args: []string{"--repo", "org/proj"}, vars: vars, code: exitcode.Usage, msg: "--issue N"},
		{name: "bad repo", args: []string{"--repo", "org", "--issue", "7"}, vars: vars, code: exitcode.Usage, msg: "OWNER/NAME"},
		{name: "no server", args: []string{"--repo", "org/proj", "--issue", "7"}, vars: map[string]string{}, code: exitcode.Usage, msg: "GITHUB_SERVER_URL"},
		{name: "labels online", args: []string{"--repo", "org/proj", "--issue", "7", "--labels", "x"}, vars: vars, code: exitcode.Usage, msg: "--labels goes with --body"},
		{name: "unreachable", err: &forge.UnreachableError{URL: "http://gitea.test", Method: "GET", Path: "/api/v1/repos/org/proj/issues/7", Err: errors.New("connection refused")},
			args: []string{"--repo", "org/proj", "--issue", "7"}, vars: vars, code: exitcode.CannotRun, msg: "could not reach the server http://gitea.test to read"},
		{name: "token rejected", err: &forge.HTTPError{Method: "GET", Path: "/x", Status: 401}, args: []string{"--repo", "org/proj", "--issue", "7"}, vars: vars, code: exitcode.CannotRun, msg: "rejected the token from GITEA_TOKEN (HTTP 401)"},
		{name: "not found", args: []string{"--repo", "org/proj", "--issue", "8"}, vars: vars, code: exitcode.Usage, msg: "context: issue #8 does not exist in org/proj"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv.Heal()
			if tt.err != nil {
				srv.Inject(fakeforge.Fault{Err: tt.err})
			}
			r := runContextOnline(t, f, tt.vars, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.msg) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", r.code, tt.code, r.stderr, tt.msg)
			}
			if strings.Contains(r.stderr, "t1") {
				t.Error("token printed")
			}
		})
	}
}

// TestContextDefaultOverflowLog: without --overflow-log, the warning is
// logged only when .kilo/logs exists.
func TestContextDefaultOverflowLog(t *testing.T) {
	files := map[string]string{"body.md": sharedFile(t, "body.md"), "big": strings.Repeat("line of text\n", 2000)}
	r := runContextCLI(t, memFiles(files), nil, "--body", "body.md", "--file", "big")
	if r.code != 0 || len(r.appended) != 0 || !strings.Contains(r.stderr, "pass --overflow-log FILE to log it") {
		t.Errorf("without the folder: %s", r)
	}
	old := dirExists
	defer func() { dirExists = old }()
	var out, errb bytes.Buffer
	appended := map[string]string{}
	env := Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, ReadFile: memFiles(files),
		AppendFile: func(n string, d []byte) error { appended[n] += string(d); return nil },
		Now:        func() time.Time { return time.Date(2026, 5, 16, 14, 0, 0, 0, time.UTC) }}
	dirExists = func(p string) bool { return p == ".kilo/logs" }
	if code := Main(context.Background(), []string{"context", "--body", "body.md", "--file", "big"}, env); code != 0 {
		t.Fatal(errb.String())
	}
	if !strings.Contains(appended[".kilo/logs/context-overflow-warnings.jsonl"], `"issue":42`) {
		t.Errorf("appended %v; stderr %s", appended, errb.String())
	}
}

// TestContextIsTheGuardsMeasure: with no file and no skill, the load
// `context` prints is, token for token, the entry load the guard judges
// (its context-tokens less next_estimated_tokens), and the guard's own
// comments count in neither, whatever they hold.
func TestContextIsTheGuardsMeasure(t *testing.T) {
	body := sharedFile(t, "body.md")
	var comments []map[string]any
	if err := json.Unmarshal([]byte(sharedFile(t, "comments.json")), &comments); err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("the guard's burn chart and findings, ", 400)
	for i, m := range []string{issues.StatusMarker(42), issues.ArchiveMarkerPrefix(42) + " phase=x part=1/1 -->", issues.DigestMarker(42)} {
		comments = append(comments, map[string]any{"id": 200 + i, "author": issues.ActionsUser, "body": m + "\n" + huge})
	}
	data, err := json.Marshal(comments)
	if err != nil {
		t.Fatal(err)
	}
	files := memFiles(map[string]string{"body.md": body, "comments.json": string(data)})
	r := runContextCLI(t, files, nil, "--body", "body.md", "--comments", "comments.json", "--format", "json")
	if r.code != 0 {
		t.Fatalf("context: %s", r)
	}
	var rep struct {
		Tokens int `json:"tokens"`
		Guard  struct {
			ContextTokens int64 `json:"context_tokens"`
			EntryTokens   int   `json:"entry_tokens"`
			NextEstimated int64 `json:"next_estimated_tokens"`
		} `json:"guard"`
		Skipped []entryload.Skipped `json:"guard_comments_left_out"`
		Text    string              `json:"text"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	c, _ := tokens.New(tokens.CL100kBase)
	if n := c.Count(rep.Text); rep.Tokens != n || rep.Guard.EntryTokens != n || rep.Guard.ContextTokens != int64(n)+rep.Guard.NextEstimated {
		t.Errorf("context printed %d tokens (it says %d); the guard judges an entry load of %d, context-tokens %d (next %d)",
			n, rep.Tokens, rep.Guard.EntryTokens, rep.Guard.ContextTokens, rep.Guard.NextEstimated)
	}
	if len(rep.Skipped) < 3 || rep.Skipped[0].ID != 202 || strings.Contains(rep.Text, "burn chart") {
		t.Errorf("the guard's own comments were loaded: left out %v", rep.Skipped)
	}
}

// TestContextNamesInitsTemplate: the refusal of an ungoverned issue names
// the issue template init writes.
func TestContextNamesInitsTemplate(t *testing.T) {
	if briefing.IssueTemplate != issueTemplateName {
		t.Errorf("context names the template %q, init writes %q", briefing.IssueTemplate, issueTemplateName)
	}
}
