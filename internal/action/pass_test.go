package action_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
)

// cleanPassRequests is what a clean pass costs with a personal token: GET
// /user (whose token is this? needed to skip the events its own user
// causes), GET the issue, and one page of its timeline (the recent
// comments). With the Actions token (recognised through action.yml's
// GNS_GUARD_ACTIONS_TOKEN, which these steps leave unset: their token is a
// personal one) the guard knows its user without asking, which leaves the
// two requests docs/contract.md §6 allows.
const cleanPassRequests = 3

// firstRunRequests is what the first run on a healthy issue costs: the
// clean pass's reads, the repository's configuration file and its posture
// (later runs for the same commit take both from the ledger's record), who
// can write the issue (kept in the record, so that a writer's first
// comment costs nothing), the status comment that holds the guard's ledger
// (posted first, then completed: the run writes the body), one re-read
// that settles a duplicate a concurrent run may have posted, and the read
// hint written (docs/ledger.md#the-read-hint).
const firstRunRequests = cleanPassRequests + 6 + postureRequests

// ledgerAndHint reports whether writes are a first run's on a healthy
// issue: the status comment that holds the ledger, posted and completed,
// and the read hint.
func ledgerAndHint(writes []string) bool {
	return len(writes) == 3 && strings.HasPrefix(writes[0], "posted the status comment") &&
		strings.HasPrefix(writes[1], "wrote the read hint") && strings.HasPrefix(writes[2], "updated the status comment")
}

// withoutHint is body without its read hint line.
func withoutHint(body string) string {
	return hintLine.ReplaceAllString(body, "")
}

var hintLine = regexp.MustCompile("(?m)^ *# gns-guard: comments since \\S+\r?\n")

// postureRequests is what judging the posture costs on the tests'
// repositories (docs/operations.md#the-posture-check): the repository, its
// teams (a user's repository has none: one answer), its collaborators and
// the permission of the first (the guard's own: the next is refused to
// its token), the workflows and each file (the capture workflow), the
// default branch, and the secrets' names (refused).
const postureRequests = 8

// A healthy issue passes and reports its numbers. Its first run posts the
// status comment that holds the guard's ledger; later runs on the unchanged
// issue write nothing. (What the first run costs on Gitea,
// firstRunRequests, TestFirstRunCost holds.)
func TestHealthyIssuePassesWithoutWriting(t *testing.T) {
	f := newFakeFixture(t)
	n, d := f.Open(t, "healthy", example(t, "healthy.md"), "cascade::depth-2", "size::medium", "phase::implementation")
	before := f.Issue(t, n)
	r := f.Run(t, d)
	r.Expect(t, 0, "pass")
	if !ledgerAndHint(r.Writes) {
		t.Errorf("a healthy issue's first run must write its ledger and the read hint, nothing else; the guard made %q", r.Writes)
	}
	if id := f.Status(t, n).ID; r.Outputs["status-comment-id"] != strconv.FormatInt(id, 10) {
		t.Errorf("output status-comment-id %q, the status comment is %d", r.Outputs["status-comment-id"], id)
	}
	if st := f.Status(t, n).Body; !strings.Contains(st, "all clear") || !strings.Contains(st, "adopted as the baseline") || !strings.Contains(st, "<!-- gns-guard:ledger v2 ") {
		t.Errorf("the status comment does not say all clear and that the state was adopted:\n%s", st)
	}
	want := map[string]string{
		"result": "pass", "violations": "[]", "pruned": "false", "archive-comment-ids": "[]",
		"depth": "1", "max-depth": "2", "budget-remaining": "13800",
	}
	for k, v := range want {
		if r.Outputs[k] != v {
			t.Errorf("output %s = %q, expected %q", k, r.Outputs[k], v)
		}
	}
	// The entry load as `context` prints it (the checkpoint, no comments
	// yet: the status comment is the guard's own) + the 3500 estimated,
	// over the 10000 of a medium task; the same figure in the outputs, the
	// metrics record and the step summary.
	e := measure(t, before.Body, nil, f.Bot, 10000)
	if e.checkpoint < 200 || e.checkpoint > 1200 || e.comments != 0 || e.next != 3500 || e.entry <= e.checkpoint {
		t.Errorf("test setup: checkpoint %d tokens, comments %d, next %d, entry load %d", e.checkpoint, e.comments, e.next, e.entry)
	}
	checkFigures(t, r, e, "medium", n)
	after := f.Issue(t, n)
	if withoutHint(after.Body) != before.Body || after.Body == before.Body || strings.Join(after.LabelNames(), ",") != strings.Join(before.LabelNames(), ",") || after.Comments != 1 || after.Locked {
		t.Errorf("the issue changed: before %+v, after %+v", before, after)
	}
	// A second event on the unchanged issue (closed and reopened): the
	// same reads, still nothing to write.
	for _, state := range []string{"closed", "open"} {
		if _, err := f.S.Dial(f.Admin().Token).EditIssue(t.Context(), n, port.IssueEdit{State: &state}); err != nil {
			t.Fatal(err)
		}
	}
	r2 := f.Run(t, f.Runs.Next(t, actiontest.From("issues", "reopened", n, f.Admin().Login)))
	r2.Expect(t, 0, "pass")
	if len(r2.Writes) != 0 || r2.Requests != cleanPassRequests || !strings.Contains(r2.Stdout, "no writes needed") {
		t.Errorf("the reopened event: %d requests, writes %q", r2.Requests, r2.Writes)
	}
	// The step summary: a row per check and the budget bar (6,200 of 20,000 = 31%: 6 of 20 cells).
	for _, s := range []string{"| check | result |", "| `depth-exceeded` | ✅ pass |", "| `budget-exhausted` | ✅ pass |", "**Budget** `██████░░░░░░░░░░░░░░` 6,200 of 20,000 tokens consumed in this phase (31%), 13,800 left · **Lifetime** 6,200 tokens consumed on the issue, all in this phase"} {
		if !strings.Contains(r.Summary, s) {
			t.Errorf("the step summary lacks %q:\n%s", s, r.Summary)
		}
	}
}

// An issue with no checkpoint and no governed label is none of the guard's
// business: skipped, nothing written.
func TestUngovernedIssueIsSkipped(t *testing.T) {
	f := newFakeFixture(t)
	n, d := f.Open(t, "just a bug", func(int64) string { return "The export button does nothing.\n\n```yaml\nfoo: bar\n```\n" }, "bug")
	r := f.Run(t, d)
	r.Expect(t, 0, "skipped")
	if len(r.Writes) != 0 || r.Outputs["violations"] != "[]" {
		t.Errorf("writes %q, violations %s", r.Writes, r.Outputs["violations"])
	}
	if st := f.Issue(t, n); st.Comments != 0 || strings.Join(st.LabelNames(), ",") != "bug" {
		t.Errorf("the issue changed: %+v", st)
	}
}

// The events the guard's own writes cause are skipped: no loops.
func TestOwnEventsAreSkipped(t *testing.T) {
	f := newFakeFixture(t)
	n, d := f.Open(t, "too deep", example(t, "depth-exceeded.md"), "cascade::depth-2", "size::medium", "phase::implementation")
	r := f.Run(t, d)
	r.Expect(t, 1, "fail")
	own := f.Runs.Next(t, actiontest.From("issues", "label_updated", n, f.Bot))
	r = f.Run(t, own)
	r.Expect(t, 0, "skipped")
	if len(r.Writes) != 0 || !strings.Contains(r.Stdout, "no loops") {
		t.Errorf("the guard's own label event: writes %q\n%s", r.Writes, r.Stdout)
	}
	if st := f.Issue(t, n); st.Comments != 1 {
		t.Errorf("expected the one status comment of the first run, the issue has %d comments", st.Comments)
	}
}

// fail-on: never reports the violation and lets the job pass.
func TestFailOnNever(t *testing.T) {
	f := newFakeFixture(t)
	n, d := f.Open(t, "too deep", example(t, "depth-exceeded.md"), "cascade::depth-2", "size::medium", "phase::implementation")
	r := f.Run(t, d, "fail-on", "never")
	r.Expect(t, 0, "fail")
	r.ExpectRules(t, "depth-exceeded")
	if !f.Issue(t, n).Has("cascade::depth-exceeded") {
		t.Error("with fail-on: never the violation's label is still set")
	}
}

// A dry run prints every write it would make, makes none, and exits as a
// real run would.
func TestDryRunWritesNothing(t *testing.T) {
	f := newFakeFixture(t)
	n, d := f.Open(t, "too deep", example(t, "depth-exceeded.md"), "cascade::depth-2", "size::medium", "phase::implementation")
	metrics := filepath.Join(t.TempDir(), "context-budget.jsonl")
	before := f.Issue(t, n)
	r := f.Run(t, d, "dry-run", "true", "admin-token", f.Admin().Token, "metrics-file", metrics)
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "depth-exceeded")
	for _, s := range []string{
		"gns-guard: would write: add labels: cascade::depth-exceeded",
		"gns-guard: would write: lock the issue: gns-guard: cascade depth exceeded",
		"gns-guard: would write: post the status comment",
	} {
		if !strings.Contains(r.Stdout, s+"\n") {
			t.Errorf("the plan lacks %q:\n%s", s, r.Stdout)
		}
	}
	if len(r.Writes) != 0 {
		t.Errorf("a dry run wrote %q", r.Writes)
	}
	after := f.Issue(t, n)
	if after.Body != before.Body || strings.Join(after.LabelNames(), ",") != strings.Join(before.LabelNames(), ",") || after.Locked || after.Comments != 0 {
		t.Errorf("a dry run changed the issue: before %+v, after %+v", before, after)
	}
	if _, ok := f.RepoLabel(t, "cascade::depth-exceeded"); ok {
		t.Error("a dry run created the label cascade::depth-exceeded")
	}
	if _, err := os.Stat(metrics); !os.IsNotExist(err) {
		t.Errorf("a dry run wrote the metrics file (stat: %v)", err)
	}
}

// metrics-file gets one JSON line per run, in the context-budget.jsonl shape.
func TestMetricsFileGetsOneLinePerRun(t *testing.T) {
	f := newFakeFixture(t)
	n, d := f.Open(t, "healthy", example(t, "healthy.md"), "cascade::depth-2", "size::medium", "phase::implementation")
	metrics := filepath.Join(t.TempDir(), "logs", "context-budget.jsonl")
	if err := os.MkdirAll(filepath.Dir(metrics), 0o755); err != nil {
		t.Fatal(err)
	}
	var outs []string
	for range 2 {
		r := f.Run(t, d, "metrics-file", metrics)
		r.Expect(t, 0, "pass")
		outs = append(outs, r.Outputs["metrics"])
	}
	data, err := os.ReadFile(metrics)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2 || !strings.HasSuffix(string(data), "\n") {
		t.Fatalf("expected 2 lines after 2 runs, the file holds:\n%s", data)
	}
	for i, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, line)
		}
		for _, k := range []string{"ts", "agent", "issue", "context_loaded", "context_available", "context_ratio", "checkpoint_entries", "pruned"} {
			if _, ok := m[k]; !ok {
				t.Errorf("line %d lacks %s: %s", i+1, k, line)
			}
		}
		if m["issue"] != float64(n) || m["agent"] != "code-reviewer" || m["context_available"] != float64(10000) || m["checkpoint_entries"] != float64(3) || m["pruned"] != false {
			t.Errorf("line %d: %s", i+1, line)
		}
		if line != outs[i] {
			t.Errorf("line %d differs from the metrics output %s", i+1, outs[i])
		}
	}
}
