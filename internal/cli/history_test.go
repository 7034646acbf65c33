package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/port"

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/prune"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
)

// historyIssue builds an issue pruned twice, with its archives among 130
// other comments.
func historyIssue(t *testing.T) (*fakeforge.Server, []prune.Entry) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(pruneGoldenDir, "history-full.md"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 5, 17, 8, 0, 0, 0, time.UTC)
	cfg := prune.DefaultConfig()
	cfg.Signer = ledger.SecretKeys(historyKey).ArchiveSigner()
	plan := func(body string) *prune.Result {
		r := checkpoint.Parse(body, checkpoint.Options{})
		res, err := prune.Plan(body, r, 42, nil, now, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Prev, cfg.Count = res.Head, res.Count
		return res
	}
	p1 := plan(string(data))
	// Agents append two entries, then the guard prunes again.
	body := strings.Replace(p1.Body, "  current_task:", "    - {agent: code-reviewer, action: \"asked for changes @bob\", timestamp: \"2026-05-17T09:00:00Z\"}\n    - {agent: lead-developer, action: addressed review, timestamp: \"2026-05-17T10:00:00Z\"}\n  current_task:", 1)
	p2 := plan(body)
	want := append(append(append([]prune.Entry(nil), p1.Archived...), p2.Archived...), p2.Kept...)

	f := fakeforge.New("org/proj")
	f.AddIssue(issues.Issue{Number: 42, Body: p2.Body}, "alice")
	id := int64(1000)
	add := func(author, body string) {
		id++
		f.AddComment(42, issues.Comment{ID: id, Author: author, Body: body})
	}
	for i := range 60 {
		add("alice", fmt.Sprintf("comment %d", i))
	}
	add("gitea-actions", p1.Archives[0])
	add("mallory", strings.Replace(p1.Archives[0], "opened the task", "nothing happened", 1))
	for i := range 40 {
		add("bob", fmt.Sprintf("comment %d", i))
	}
	add("gitea-actions", p2.Archives[0])
	add("gitea-actions", p1.Archives[0]) // a duplicate posted later: ignored
	for i := range 30 {
		add("carol", fmt.Sprintf("comment %d", i))
	}
	// The guard's status comment, whose ledger records the last part.
	l := ledger.Record{Issue: 42, Baseline: true, Archive: p2.Head, Archived: p2.Count, Pending: []string{}}
	add("gitea-actions", issues.StatusMarker(42)+"\n## ✅ gns-guard: all clear\n"+ledger.Encode(l, historyKey)+"\n")
	return f, want
}

// commentBody is comment id's body on f's issue 42.
func commentBody(t *testing.T, f *fakeforge.Server, id int64) string {
	t.Helper()
	for _, c := range f.Comments(42) {
		if c.ID == id {
			return c.Body
		}
	}
	t.Fatalf("no comment %d", id)
	return ""
}

// historyKey is the ledger key of historyIssue's guard.
var historyKey = []byte("a9ea060ac451d2b0cdb750a8d574abb969ed4deb4e5724a239af4185a9f5f088")

func runHistoryCLI(t *testing.T, f port.Forge, vars map[string]string, args ...string) (string, string, int) {
	t.Helper()
	old := connectForge
	t.Cleanup(func() { connectForge = old })
	var gotServer, gotToken string
	connectForge = func(server, token, owner, repo string) (port.Forge, error) {
		gotServer, gotToken = server, token
		if owner != "org" || repo != "proj" {
			return nil, fmt.Errorf("unexpected repo %s/%s", owner, repo)
		}
		return f, nil
	}
	env, out, errOut := pruneTestEnv(vars)
	code := Main(context.Background(), append([]string{"history"}, args...), env)
	if vars["WANT_SERVER"] != "" && gotServer != vars["WANT_SERVER"] {
		t.Errorf("server %q, want %q", gotServer, vars["WANT_SERVER"])
	}
	if vars["WANT_TOKEN"] != "" && gotToken != vars["WANT_TOKEN"] {
		t.Errorf("token %q, want %q", gotToken, vars["WANT_TOKEN"])
	}
	return out.String(), errOut.String(), code
}

func TestHistoryYAML(t *testing.T) {
	srv, want := historyIssue(t)
	f := srv.As(issues.ActionsUser)
	vars := map[string]string{"GITHUB_SERVER_URL": "http://gitea.test", "GITEA_TOKEN": "t1", "GITHUB_TOKEN": "t2",
		"WANT_SERVER": "http://gitea.test", "WANT_TOKEN": "t1"}
	out, errOut, code := runHistoryCLI(t, f, vars, "--repo", "org/proj", "--issue", "42")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got []historyEntry
	if err := yaml.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d:\n%s", len(got), len(want), out)
	}
	for i, g := range got {
		w := want[i]
		if g.Seq != i+1 || g.Agent != w.Agent || g.Action != w.Action || g.Invocation != w.Invocation || g.Timestamp != w.Timestamp {
			t.Errorf("entry %d: %+v, want %+v", i+1, g, w)
		}
	}
	if got[0].Source != "archive" || got[0].Comment != 1061 || got[len(got)-1].Source != "checkpoint" || got[len(got)-1].Comment != 0 {
		t.Errorf("sources: first %+v, last %+v", got[0], got[len(got)-1])
	}
	if !strings.Contains(errOut, `archive comments by "mallory" were not trusted`) {
		t.Errorf("no note about untrusted archives: %q", errOut)
	}
	// Self, the issue, the last page, and the one page before it.
	if f.Requests() != 4 {
		t.Errorf("%d requests", f.Requests())
	}
}

func TestHistoryJSONTrust(t *testing.T) {
	srv, _ := historyIssue(t)
	out, errOut, code := runHistoryCLI(t, srv.As("someone-else"), map[string]string{"WANT_TOKEN": "tok"},
		"--repo", "org/proj", "--issue", "42", "--server", "http://x", "--token", "tok", "--format", "json", "--trust", "mallory", "--no-verify")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got []historyEntry
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	// Only mallory's copy of the first archive counts (its table was edited,
	// its JSON was not), then the checkpoint's tail.
	if len(got) != 3+3 || got[0].Comment != 1062 || got[0].Action != "opened the task" || got[3].Source != "checkpoint" {
		t.Errorf("got %+v", got)
	}
	if !strings.Contains(errOut, `archive comments by "gitea-actions" were not trusted (only "mallory"'s are)`) {
		t.Errorf("stderr: %s", errOut)
	}
}

func TestHistoryProblems(t *testing.T) {
	srv, _ := historyIssue(t)
	// Drop the second archive's part and tamper with the first.
	for _, c := range srv.Comments(42) {
		if c.Author == "gitea-actions" {
			srv.SetCommentBody(c.ID, strings.Replace(c.Body, `"action":"opened the task"`, `"action":"opened the tusk"`, 1))
		}
	}
	f := srv.As(issues.ActionsUser)
	_, errOut, code := runHistoryCLI(t, f, map[string]string{"GITHUB_TOKEN": "t"}, "--repo", "org/proj", "--issue", "42", "--server", "http://x")
	if code != exitcode.Violation {
		t.Fatalf("exit %d, want 1: %s", code, errOut)
	}
	if !strings.Contains(errOut, "comment 1061: archive part 1/1 (claiming entries 1–") || !strings.Contains(errOut, "is not on the chain") {
		t.Errorf("stderr: %s", errOut)
	}
	// Unproven, the hash still tells.
	_, errOut, code = runHistoryCLI(t, f, map[string]string{"GITHUB_TOKEN": "t"}, "--repo", "org/proj", "--issue", "42", "--server", "http://x", "--no-verify")
	if code != exitcode.Violation || !strings.Contains(errOut, "it was edited") {
		t.Errorf("--no-verify: exit %d: %s", code, errOut)
	}
}

// TestHistoryChain: the chain proves the history; an archive edited (an
// entry dropped and its hash recomputed), deleted or reordered is named,
// with or without the ledger key, and exits 1.
func TestHistoryChain(t *testing.T) {
	args := []string{"--repo", "org/proj", "--issue", "42", "--server", "http://x"}
	vars := map[string]string{"GITHUB_TOKEN": "t", "KEY": string(historyKey), "WRONG": "a5bed7447d48e5a7fd55833807c2ba009fad806e9f023e471168a7c58621e4bb"}
	withKey := append(slices.Clone(args), "--ledger-key-env", "KEY")
	srv, _ := historyIssue(t)
	f := srv.As(issues.ActionsUser)
	if _, errOut, code := runHistoryCLI(t, f, vars, withKey...); code != 0 {
		t.Fatalf("a whole chain, verified: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runHistoryCLI(t, f, vars, append(slices.Clone(args), "--ledger-key-env", "WRONG")...); code != exitcode.Violation || !strings.Contains(errOut, "which this workflow does not hold") {
		t.Errorf("the wrong key: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runHistoryCLI(t, f, vars, append(slices.Clone(args), "--ledger-key-env", "UNSET")...); code != exitcode.Usage {
		t.Errorf("an unset key variable: exit %d: %s", code, errOut)
	}
	vars["WEAK"] = "s3cret"
	if _, errOut, code := runHistoryCLI(t, f, vars, append(slices.Clone(args), "--ledger-key-env", "WEAK")...); code != exitcode.Usage ||
		!strings.Contains(errOut, "--ledger-key-env WEAK") || !strings.Contains(errOut, "256 bits") || !strings.Contains(errOut, "gns-guard keygen") || strings.Contains(errOut, "s3cret") {
		t.Errorf("a key under 256 bits: exit %d, want 2 naming the minimum and keygen: %s", code, errOut)
	}
	for _, tt := range []struct {
		name   string
		tamper func(f *fakeforge.Server)
		says   []string
	}{
		{"edited", func(f *fakeforge.Server) {
			a, err := prune.ParseArchive(commentBody(t, f, 1061))
			if err != nil {
				t.Fatal(err)
			}
			// Drop the first entry and recompute the hash: the comment
			// still reads, its hash matches its entries.
			dropped := a.Entries[0]
			js, _ := json.Marshal(dropped)
			body := strings.Replace(commentBody(t, f, 1061), string(js)+",", "", 1)
			sha := prune.Hash(a.Issue, a.Phase, a.Budget, a.Entries[1:])
			f.SetCommentBody(1061, strings.ReplaceAll(body, a.SHA256, sha))
			if b, err := prune.ParseArchive(commentBody(t, f, 1061)); err != nil || prune.Verify([]*prune.Archive{b}) != nil {
				t.Fatalf("the edit does not read back: %v", err)
			}
		}, []string{"comment 1061", "not on the chain", "comment 1103", "before this one", "missing"}},
		{"deleted", func(f *fakeforge.Server) {
			f.RemoveComment(1061)
		}, []string{"comment 1103", "before this one", "missing"}},
		{"deleted last", func(f *fakeforge.Server) {
			f.RemoveComment(1103)
		}, []string{"the last archive part the ledger records", "missing"}},
		{"reordered", func(f *fakeforge.Server) {
			first, second := commentBody(t, f, 1061), commentBody(t, f, 1103)
			f.SetCommentBody(1061, second)
			f.SetCommentBody(1103, first)
		}, []string{"comment 1061", "reordered"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := historyIssue(t)
			// The later duplicate of the first archive would stand in for
			// the original: drop it.
			srv.RemoveComment(1104)
			tt.tamper(srv)
			for _, a := range [][]string{args, withKey} {
				_, errOut, code := runHistoryCLI(t, srv.As(issues.ActionsUser), vars, a...)
				if code != exitcode.Violation {
					t.Errorf("%v: exit %d, want 1: %s", a, code, errOut)
				}
				for _, s := range tt.says {
					if !strings.Contains(errOut, s) && !(len(a) > len(args) && tt.name == "edited" && s == "not on the chain") {
						t.Errorf("%v: stderr lacks %q:\n%s", a, s, errOut)
					}
				}
			}
		})
	}
}

func TestHistoryErrors(t *testing.T) {
	srv, _ := historyIssue(t)
	vars := map[string]string{"GITEA_TOKEN": "t", "GITHUB_SERVER_URL": "http://x"}
	for _, tt := range []struct {
		name string
		err  error
		args []string
		vars map[string]string
		code int
		msg  string
	}{
		{name: "no repo", args: []string{"--issue", "1"}, vars: vars, code: exitcode.Usage, msg: "--repo"},
		{name: "bad repo", args: []string{"--repo", "a/b/c", "--issue", "1"}, vars: vars, code: exitcode.Usage, msg: "OWNER/NAME"},
		{name: "no issue", args: []string{"--repo", "org/proj"}, vars: vars, code: exitcode.Usage, msg: "--issue"},
		{name: "positional", args: []string{"--repo", "org/proj", "--issue", "42", "extra"}, vars: vars, code: exitcode.Usage, msg: "positional"},
		{name: "format", args: []string{"--repo", "org/proj", "--issue", "42", "--format", "xml"}, vars: vars, code: exitcode.Usage, msg: "--format"},
		{name: "no server", args: []string{"--repo", "org/proj", "--issue", "42"}, vars: map[string]string{"GITEA_TOKEN": "t"}, code: exitcode.Usage, msg: "GITHUB_SERVER_URL"},
		// No token: a public repository is read, and the guard is the
		// writer its signed ledger names.
		{name: "no token", args: []string{"--repo", "org/proj", "--issue", "42"}, vars: map[string]string{"GITHUB_SERVER_URL": "http://x"}, code: exitcode.Clean, msg: `only "gitea-actions"'s are`},
		{name: "unreachable", err: &forge.UnreachableError{URL: "http://x", Method: "GET", Path: "/api/v1/user", Err: errors.New("connection refused")}, args: []string{"--repo", "org/proj", "--issue", "42"}, vars: vars, code: exitcode.CannotRun, msg: "could not reach the server http://x"},
		{name: "token rejected", err: &forge.HTTPError{Method: "GET", Path: "/api/v1/user", Status: 401}, args: []string{"--repo", "org/proj", "--issue", "42"}, vars: vars, code: exitcode.CannotRun, msg: "rejected the token from GITEA_TOKEN (HTTP 401)"},
		{name: "not found", args: []string{"--repo", "org/proj", "--issue", "43"}, vars: vars, code: exitcode.Usage, msg: "history: issue #43 does not exist in org/proj"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv.Heal()
			if tt.err != nil {
				srv.Inject(fakeforge.Fault{Err: tt.err})
			}
			_, errOut, code := runHistoryCLI(t, srv.As(issues.ActionsUser), tt.vars, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.msg) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tt.code, errOut, tt.msg)
			}
			if strings.Contains(errOut, "\tt\n") {
				t.Error("token printed")
			}
		})
	}
}
