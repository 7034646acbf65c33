package action_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/prune"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// fakeArchive is what anyone can make from `gns-guard prune`'s output: a
// comment with the marker and the hash of the archive the guard will post,
// holding only the first keep of its entries.
func fakeArchive(t *testing.T, body string, n int64, keep int) (string, string) {
	t.Helper()
	pr, err := prune.Plan(body, checkpoint.Parse(body, checkpoint.Options{}), n, nil, time.Now(), prune.DefaultConfig())
	if err != nil || len(pr.Archives) != 1 {
		t.Fatalf("planning the prune: %v", err)
	}
	a, err := prune.ParseArchive(pr.Archives[0])
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(map[string]any{"gns_archive": 1, "issue": n, "phase": a.Phase, "part": 1, "parts": 1,
		"sha256": pr.SHA256, "first_seq": 1, "budget": a.Budget, "entries": a.Entries[:keep]})
	if err != nil {
		t.Fatal(err)
	}
	fake := fmt.Sprintf("%s\n\nNothing to see.\n\n```json\n%s\n```\n\n<!-- gns-guard:archive issue=%d phase=%s part=1/1 sha256=%s -->\n",
		prune.Heading, js, n, prune.SanitizePhase(a.Phase), pr.SHA256)
	if p, err := prune.ParseArchive(fake); err != nil || len(p.Entries) != keep {
		t.Fatalf("the fake does not read as an archive: %v", err)
	}
	return fake, pr.SHA256
}

// expectWholeArchive asserts the run posted the real archive (not the
// fake), pruned the body, and that `gns-guard history` rebuilds all
// entries of the issue as opened.
func expectWholeArchive(t *testing.T, f *actiontest.Repo, n, fake int64, r actiontest.Result, want int) {
	t.Helper()
	if r.Outputs["pruned"] != "true" {
		t.Fatalf("not pruned\n%s", r.String())
	}
	var ids []int64
	actiontest.DecodeJSON(t, r, "archive-comment-ids", &ids)
	if len(ids) != 1 || ids[0] == fake {
		t.Fatalf("archive-comment-ids = %v: the fake comment %d stood in for the archive\n%s", ids, fake, r.String())
	}
	// history rebuilds every entry, and names the fake, which does not
	// verify by its own hash.
	got, errOut, code := runHistory(t, f, n, "--ledger-key-env", "LEDGER_KEY")
	if code != 1 || len(got) != want || !strings.Contains(errOut, fmt.Sprintf("comment %d: ", fake)) {
		t.Errorf("history: exit %d, %d entries, want 1 and %d entries naming comment %d\n%s", code, len(got), want, fake, errOut)
	}
	if st := f.Status(t, n).Body; !strings.Contains(st, fmt.Sprint(fake)) || !strings.Contains(st, "not the guard's archive") {
		t.Errorf("the status comment does not report the impostor %d:\n%s", fake, st)
	}
}

// runHistory runs `gns-guard history` as the guard's user (whose archives
// are trusted), with extra flags, and returns the entries, stderr and
// exit code.
func runHistory(t *testing.T, f *actiontest.Repo, n int64, extra ...string) ([]json.RawMessage, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"history", "--repo", f.Owner + "/" + f.Name, "--issue", fmt.Sprint(n), "--server", f.S.URL, "--token", f.Token, "--format", "json"}, extra...)
	cmd := exec.CommandContext(ctx, actiontest.Binary(t), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "LEDGER_KEY=" + ledgerKey}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var out []json.RawMessage
	if code != 2 && code != 3 {
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("history output: %v\n%s", err, stdout.String())
		}
	}
	return out, stderr.String(), code
}

// TestFakeArchiveBeforePrune: a comment carrying the marker and hash of
// the archive the guard is about to post, with most entries gone, does not
// stop the real archive: posted as the guard's user (another Actions job
// of the repository posts as gitea-actions too), or made by an issue
// writer's edit of one of the guard's comments.
func TestFakeArchiveBeforePrune(t *testing.T) {
	f := newFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	const entries = 14 // over-budget.md's history

	t.Run("posted as the guard's user", func(t *testing.T) {
		// Opened with budget to spare; the fake is posted once the guard
		// knows the issue, made for the body an agent is about to write.
		over := example(t, "over-budget.md")
		n, d := f.Open(t, "fake archive posted", func(n int64) string {
			return strings.NewReplacer("consumed: 17400", "consumed: 10000", "remaining: 2600", "remaining: 10000").Replace(over(n))
		}, governed...)
		f.Run(t, d, "ledger-key", ledgerKey).Expect(t, 0, "pass")
		fake, _ := fakeArchive(t, over(n), n, 3)
		var c actiontest.Comment
		f.API(t, f.Token, http.MethodPost, f.Path("/issues/%d/comments", n), map[string]string{"body": fake}, &c)
		d = f.EditBody(t, n, agent, over(n))
		r := f.Run(t, d, "ledger-key", ledgerKey)
		r.Expect(t, 0, "pass")
		expectWholeArchive(t, f, n, c.ID, r, entries)
	})

	t.Run("a guard comment edited", func(t *testing.T) {
		// A broken checkpoint: the guard posts its recovery request.
		good := example(t, "over-budget.md")
		n, d := f.Open(t, "fake archive edited", func(n int64) string { return strings.Replace(good(n), "  budget:\n", "  budget: [\n", 1) }, governed...)
		f.Run(t, d, "ledger-key", ledgerKey).Expect(t, 1, "fail")
		rec := f.GuardComments(t, n, actiontest.RecoveryMarker(n))
		if len(rec) != 1 {
			t.Fatalf("%d recovery comments", len(rec))
		}
		fake, _ := fakeArchiveFor(t, f, n)
		f.EditComment(t, n, rec[0].ID, agent, fake)
		d = f.EditBody(t, n, f.Admin(), good(n))
		// The repaired body is a first state edited since the opening, by
		// an approver: the edit's own run names the owner and adopts it.
		r := f.Run(t, d, "ledger-key", ledgerKey)
		expectWholeArchive(t, f, n, rec[0].ID, r, entries)
		// An agent's repair waits for an approver instead.
		n2, d2 := f.Open(t, "fake archive edited, an agent's repair", func(n int64) string { return strings.Replace(good(n), "  budget:\n", "  budget: [\n", 1) }, governed...)
		f.Run(t, d2, "ledger-key", ledgerKey).Expect(t, 1, "fail")
		expectTampered(t, f, n2, f.Run(t, f.EditBody(t, n2, agent, good(n2)), "ledger-key", ledgerKey), "edited since it was opened")
		if got := f.Comments(t, n); !slices.ContainsFunc(got, func(c actiontest.Comment) bool { return c.ID == rec[0].ID && c.Body == fake }) {
			t.Error("the edited comment was changed or deleted by the guard")
		}
	})
}

// fakeArchiveFor makes the fake for issue n as it reads now, keeping 3 of
// its entries.
func fakeArchiveFor(t *testing.T, f *actiontest.Repo, n int64) (string, string) {
	t.Helper()
	body := f.Issue(t, n).Body
	if strings.Contains(body, "budget: [") {
		body = strings.Replace(body, "  budget: [\n", "  budget:\n", 1)
	}
	return fakeArchive(t, body, n, 3)
}

// twoArchives opens an over-budget issue and has the guard prune it twice
// (the second time history_tail past twice history-tail): it returns the
// issue and its two archive comments, oldest first. The status comment
// comes between them.
func twoArchives(t *testing.T, f *actiontest.Repo, agent actiontest.User, title string) (int64, []actiontest.Comment) {
	t.Helper()
	n, d := f.Open(t, title, example(t, "over-budget.md"), governed...)
	f.Run(t, d, "ledger-key", ledgerKey).Expect(t, 0, "pass")
	body := f.Issue(t, n).Body
	i := strings.Index(body, "  current_task:")
	var more strings.Builder
	for k := range 4 {
		fmt.Fprintf(&more, "    - {agent: tester, action: ran the load tests (round %d), timestamp: \"2026-05-16T12:2%d:00Z\"}\n", 3+k, k)
	}
	body = body[:i] + more.String() + body[i:]
	body = replace(t, body, "next_estimated_tokens: 1200", "next_estimated_tokens: 500")
	r := f.Run(t, f.EditBody(t, n, agent, body), "ledger-key", ledgerKey)
	r.Expect(t, 0, "pass")
	if r.Outputs["pruned"] != "true" {
		t.Fatalf("the second prune did not happen\n%s", r.String())
	}
	as := f.GuardComments(t, n, prune.MarkerPrefix)
	if len(as) != 2 {
		t.Fatalf("%d archive comments, want 2", len(as))
	}
	return n, as
}

// TestStatusMarkerInArchive: a status marker added to an archive comment
// newer than the status comment does not make it the status comment: the
// guard never overwrites the archive.
func TestStatusMarkerInArchive(t *testing.T) {
	f := newFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	n, as := twoArchives(t, f, agent, "status marker in an archive")
	st := f.Status(t, n)
	if as[1].ID < st.ID {
		t.Fatalf("the second archive %d is not newer than the status comment %d", as[1].ID, st.ID)
	}
	edited := actiontest.StatusMarker(n) + "\n" + as[1].Body
	f.EditComment(t, n, as[1].ID, agent, edited)
	_, d := f.Comment(t, n, agent, "Carrying on.")
	f.Run(t, d, "ledger-key", ledgerKey)
	for _, c := range f.Comments(t, n) {
		if c.ID == as[1].ID && c.Body != edited {
			t.Fatalf("the guard overwrote archive comment %d:\n%s", c.ID, c.Body)
		}
	}
	if _, errOut, code := runHistory(t, f, n, "--ledger-key-env", "LEDGER_KEY"); code != 0 {
		t.Errorf("history after the marker was added: exit %d\n%s", code, errOut)
	}
}

// TestHistoryDetectsTampering: on the real server, `gns-guard history`
// names the comment of an archive edited (an entry dropped, its hash
// recomputed), deleted, or reordered, and exits 1.
func TestHistoryDetectsTampering(t *testing.T) {
	f := newFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	for _, tt := range []struct {
		name   string
		tamper func(t *testing.T, n int64, as []actiontest.Comment) int64 // the comment to be named
		says   string
	}{
		{"edited", func(t *testing.T, n int64, as []actiontest.Comment) int64 {
			a, err := prune.ParseArchive(as[0].Body)
			if err != nil {
				t.Fatal(err)
			}
			js, _ := json.Marshal(a.Entries[1])
			body := strings.Replace(as[0].Body, ","+string(js), "", 1)
			body = strings.ReplaceAll(body, a.SHA256, prune.Hash(a.Issue, a.Phase, a.Budget, slices.Delete(slices.Clone(a.Entries), 1, 2)))
			if p, err := prune.ParseArchive(body); err != nil || prune.Verify([]*prune.Archive{p}) != nil {
				t.Fatalf("the edited archive does not verify by its hash: %v", err)
			}
			f.EditComment(t, n, as[0].ID, agent, body)
			return as[0].ID
		}, "not on the chain"},
		{"deleted", func(t *testing.T, n int64, as []actiontest.Comment) int64 {
			f.DeleteComment(t, as[0].ID, agent)
			return as[1].ID
		}, "missing"},
		{"reordered", func(t *testing.T, n int64, as []actiontest.Comment) int64 {
			f.EditComment(t, n, as[0].ID, agent, as[1].Body)
			f.EditComment(t, n, as[1].ID, agent, as[0].Body)
			return as[0].ID
		}, "reordered"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, as := twoArchives(t, f, agent, "history "+tt.name)
			if _, errOut, code := runHistory(t, f, n); code != 0 || errOut != "" {
				t.Fatalf("history before the tamper: exit %d\n%s", code, errOut)
			}
			named := tt.tamper(t, n, as)
			for _, extra := range [][]string{nil, {"--ledger-key-env", "LEDGER_KEY"}} {
				_, errOut, code := runHistory(t, f, n, extra...)
				if code != 1 || !strings.Contains(errOut, fmt.Sprintf("comment %d", named)) || !strings.Contains(errOut, tt.says) && !(tt.name == "edited" && strings.Contains(errOut, "signature does not verify")) {
					t.Errorf("history %v: exit %d, want 1 naming comment %d (%q):\n%s", extra, code, named, tt.says, errOut)
				}
			}
		})
	}
}
