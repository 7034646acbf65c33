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

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// fakeForge serves one issue and a timeline of comments, 50 to a page,
// the way internal/forge pages it. Only the read methods work.
type fakeForge struct {
	issues.Forge // nil: any other method panics
	self         string
	issue        issues.Issue
	comments     []issues.Comment // oldest first, one per timeline entry
	err          error            // returned by every call when set
	requests     int
}

// ServerTime is unknown: the server sent no Date.
func (f *fakeForge) ServerTime() time.Time { return time.Time{} }

// Writers are the accounts the tests' comments come from.
func (f *fakeForge) Writers(context.Context) ([]string, error) {
	f.requests++
	var out []string
	for _, c := range f.comments {
		out = append(out, c.Author)
	}
	return out, f.err
}

// File serves a repository with no configuration file.
func (f *fakeForge) File(context.Context, string, int64) ([]byte, error) {
	f.requests++
	if f.err != nil {
		return nil, f.err
	}
	return nil, fmt.Errorf("GET file: %w", issues.ErrNotFound)
}

func (f *fakeForge) Self(context.Context) (string, error) {
	f.requests++
	return f.self, f.err
}

func (f *fakeForge) Issue(_ context.Context, n int64) (issues.Issue, error) {
	f.requests++
	if f.err != nil {
		return issues.Issue{}, f.err
	}
	if n != f.issue.Number {
		return issues.Issue{}, fmt.Errorf("GET issue %d: %w", n, issues.ErrNotFound)
	}
	return f.issue, nil
}

func (f *fakeForge) RecentComments(_ context.Context, _ issues.Issue, n int) (issues.CommentPage, error) {
	f.requests++
	start := (max(len(f.comments)-n, 0) / 50) * 50
	return issues.CommentPage{Comments: f.comments[start:], Start: start}, f.err
}

func (f *fakeForge) CommentsBefore(_ context.Context, _ int64, start int) (issues.CommentPage, error) {
	f.requests++
	end := ((start + 49) / 50) * 50
	from := max(end-50, 0)
	return issues.CommentPage{Comments: f.comments[from:min(end, len(f.comments))], Start: from}, f.err
}

// historyIssue builds an issue pruned twice, with its archives among 130
// other comments.
func historyIssue(t *testing.T) (*fakeForge, []prune.Entry) {
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

	f := &fakeForge{self: "gitea-actions", issue: issues.Issue{Number: 42, Body: p2.Body}}
	id := int64(1000)
	add := func(author, body string) {
		id++
		f.comments = append(f.comments, issues.Comment{ID: id, Author: author, Body: body})
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

// historyKey is the ledger key of historyIssue's guard.
var historyKey = []byte("a9ea060ac451d2b0cdb750a8d574abb969ed4deb4e5724a239af4185a9f5f088")

func runHistoryCLI(t *testing.T, f issues.Forge, vars map[string]string, args ...string) (string, string, int) {
	t.Helper()
	old := connectForge
	t.Cleanup(func() { connectForge = old })
	var gotServer, gotToken string
	connectForge = func(server, token, owner, repo string) (issues.Forge, error) {
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
	f, want := historyIssue(t)
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
	if f.requests != 4 {
		t.Errorf("%d requests", f.requests)
	}
}

func TestHistoryJSONTrust(t *testing.T) {
	f, _ := historyIssue(t)
	f.self = "someone-else"
	out, errOut, code := runHistoryCLI(t, f, map[string]string{"WANT_TOKEN": "tok"},
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
	f, _ := historyIssue(t)
	// Drop the second archive's part and tamper with the first.
	for i, c := range f.comments {
		if c.Author == "gitea-actions" {
			f.comments[i].Body = strings.Replace(c.Body, `"action":"opened the task"`, `"action":"opened the tusk"`, 1)
		}
	}
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
	f, _ := historyIssue(t)
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
	archiveAt := func(f *fakeForge, id int64) int {
		for i, c := range f.comments {
			if c.ID == id {
				return i
			}
		}
		t.Fatalf("no comment %d", id)
		return -1
	}
	for _, tt := range []struct {
		name   string
		tamper func(f *fakeForge)
		says   []string
	}{
		{"edited", func(f *fakeForge) {
			i := archiveAt(f, 1061)
			a, err := prune.ParseArchive(f.comments[i].Body)
			if err != nil {
				t.Fatal(err)
			}
			// Drop the first entry and recompute the hash: the comment
			// still reads, its hash matches its entries.
			dropped := a.Entries[0]
			js, _ := json.Marshal(dropped)
			body := strings.Replace(f.comments[i].Body, string(js)+",", "", 1)
			sha := prune.Hash(a.Issue, a.Phase, a.Budget, a.Entries[1:])
			f.comments[i].Body = strings.ReplaceAll(body, a.SHA256, sha)
			if b, err := prune.ParseArchive(f.comments[i].Body); err != nil || prune.Verify([]*prune.Archive{b}) != nil {
				t.Fatalf("the edit does not read back: %v", err)
			}
		}, []string{"comment 1061", "not on the chain", "comment 1103", "before this one", "missing"}},
		{"deleted", func(f *fakeForge) {
			i := archiveAt(f, 1061)
			f.comments = slices.Delete(f.comments, i, i+1)
		}, []string{"comment 1103", "before this one", "missing"}},
		{"deleted last", func(f *fakeForge) {
			i := archiveAt(f, 1103)
			f.comments = slices.Delete(f.comments, i, i+1)
		}, []string{"the last archive part the ledger records", "missing"}},
		{"reordered", func(f *fakeForge) {
			i, j := archiveAt(f, 1061), archiveAt(f, 1103)
			f.comments[i].Body, f.comments[j].Body = f.comments[j].Body, f.comments[i].Body
		}, []string{"comment 1061", "reordered"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := historyIssue(t)
			// The later duplicate of the first archive would stand in for
			// the original: drop it.
			dup := archiveAt(f, 1104)
			f.comments = slices.Delete(f.comments, dup, dup+1)
			tt.tamper(f)
			for _, a := range [][]string{args, withKey} {
				_, errOut, code := runHistoryCLI(t, f, vars, a...)
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
	f, _ := historyIssue(t)
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
			f.err = tt.err
			_, errOut, code := runHistoryCLI(t, f, tt.vars, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.msg) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tt.code, errOut, tt.msg)
			}
			if strings.Contains(errOut, "\tt\n") {
				t.Error("token printed")
			}
		})
	}
}
