package action_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/issuetx"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/prune"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
)

// These tests run action mode in process on the fake Gitea: no server, a
// run in milliseconds. Each promises one behaviour of the shell.

// A healthy issue exits 0; its first run writes only the status comment
// that holds the ledger and the body's read hint; the next run on the
// unchanged issue writes nothing and costs the two requests a clean pass
// may.
func TestInProcessHealthyIssueExits0AndWritesItsLedgerAndReadHint(t *testing.T) {
	r := newFakeRepo(t)
	n := r.open(example(t, "healthy.md"), governed...)
	first := r.run(t, opened(n))
	first.expect(t, exitcode.Clean, "pass")
	hintOnly := func(w fakeforge.Write) bool {
		return w.Method == "EditBody" && checkpoint.WithHint(w.Text, time.Unix(1, 0), 0) == checkpoint.WithHint(example(t, "healthy.md")(n), time.Unix(1, 0), 0)
	}
	if len(first.writes) != 3 || !holds("CreateComment", issues.StatusMarker(n))(first.writes[0]) || !hintOnly(first.writes[1]) || !holds("EditComment", issues.StatusMarker(n))(first.writes[2]) {
		t.Errorf("the first run must post the status comment, write the body's read hint, and complete the status comment with its ledger: %v", first.writes)
	}
	for k, v := range map[string]string{"depth": "1", "max-depth": "2", "budget-remaining": "13800", "pruned": "false", "violations": "[]"} {
		if first.outputs[k] != v {
			t.Errorf("output %s = %q, want %q", k, first.outputs[k], v)
		}
	}
	r.tick(time.Minute)
	again := r.run(t, event{"issues", "reopened", n, owner})
	again.expect(t, exitcode.Clean, "pass")
	if len(again.writes) != 0 || again.requests != 2 || !strings.Contains(again.stdout, "no writes needed") {
		t.Errorf("a clean pass: %d requests, writes %v\n%s", again.requests, again.writes, again)
	}
}

// A violation exits 1, names its rule, sets its label; the lock the
// Actions token may not make is tried, refused, and said.
func TestInProcessViolationExits1AndLabelsTheIssue(t *testing.T) {
	r := newFakeRepo(t)
	n := r.open(example(t, "depth-exceeded.md"), governed...)
	res := r.run(t, opened(n))
	res.expect(t, exitcode.Violation, "fail")
	if rules := res.rules(t); !slices.Equal(rules, []string{"depth-exceeded"}) {
		t.Errorf("rules %v", rules)
	}
	is := r.S.Issue(n)
	if !slices.Contains(is.LabelNames(), "cascade::depth-exceeded") || is.Locked || r.S.Calls("Lock") != 1 {
		t.Errorf("labels %v, locked %v, %d lock calls", is.LabelNames(), is.Locked, r.S.Calls("Lock"))
	}
	if !strings.Contains(res.summary+res.stdout, "could not be locked") {
		t.Errorf("the refused lock is not said:\n%s", res)
	}
}

// With admin-token the lock is made with the owner's client, not the
// Actions token's.
func TestInProcessAdminTokenLocksTheIssue(t *testing.T) {
	r := newFakeRepo(t)
	n := r.open(example(t, "depth-exceeded.md"), governed...)
	res := r.run(t, opened(n), "admin-token", ownerToken, "ledger-key", ledgerKey)
	res.expect(t, exitcode.Violation, "fail")
	i := indexOf(res.writes, func(w fakeforge.Write) bool { return w.Method == "Lock" })
	if i < 0 || res.writes[i].User != owner || !r.S.Issue(n).Locked {
		t.Errorf("the lock: %v", res.writes)
	}
}

// fail-on: never reports the violation and exits 0.
func TestInProcessFailOnNeverExits0(t *testing.T) {
	r := newFakeRepo(t)
	n := r.open(example(t, "depth-exceeded.md"), governed...)
	res := r.run(t, opened(n), "fail-on", "never")
	res.expect(t, exitcode.Clean, "fail")
	if rules := res.rules(t); !slices.Equal(rules, []string{"depth-exceeded"}) {
		t.Errorf("rules %v", rules)
	}
}

// A dry run exits as the run would, prints every write it would make and
// makes none.
func TestInProcessDryRunPrintsThePlanAndWritesNothing(t *testing.T) {
	r := newFakeRepo(t)
	n := r.open(example(t, "depth-exceeded.md"), governed...)
	before := r.S.Issue(n)
	res := r.run(t, opened(n), "dry-run", "true", "admin-token", ownerToken)
	res.expect(t, exitcode.Violation, "fail")
	for _, s := range []string{"would write: add labels: cascade::depth-exceeded", "would write: lock the issue", "would write: post the status comment"} {
		if !strings.Contains(res.stdout, s) {
			t.Errorf("the plan lacks %q:\n%s", s, res.stdout)
		}
	}
	after := r.S.Issue(n)
	if len(r.S.Writes()) != 0 || after.Body != before.Body || after.Comments != 0 || after.Locked || len(after.Labels) != len(before.Labels) {
		t.Errorf("a dry run wrote %v", r.S.Writes())
	}
}

// An input the guard cannot read is a usage error (exit 2), said before
// any request.
func TestInProcessBadInputExits2BeforeAnyRequest(t *testing.T) {
	r := newFakeRepo(t)
	n := r.open(example(t, "healthy.md"), governed...)
	res := r.run(t, opened(n), "history-tail", "0")
	res.expect(t, exitcode.Usage, "error")
	if r.S.Requests() != 0 || !strings.Contains(res.stdout, "history-tail") {
		t.Errorf("%d requests\n%s", r.S.Requests(), res)
	}
}

// An event payload that is not JSON is a usage error (exit 2).
func TestInProcessMalformedPayloadExits2(t *testing.T) {
	r := newFakeRepo(t)
	n := r.open(example(t, "healthy.md"), governed...)
	r.payload = []byte("{not json")
	res := r.run(t, opened(n))
	res.expect(t, exitcode.Usage, "error")
	if !strings.Contains(res.stdout, "the event payload is not valid JSON") {
		t.Errorf("%s", res)
	}
}

// A server that does not answer is a failure to run (exit 3): nothing is
// written, and the message names the server.
func TestInProcessUnreachableServerExits3(t *testing.T) {
	r := newFakeRepo(t)
	n := r.open(example(t, "healthy.md"), governed...)
	r.S.Inject(fakeforge.Fault{Unreachable: true})
	res := r.run(t, opened(n))
	res.expect(t, exitcode.CannotRun, "error")
	if len(r.S.Writes()) != 0 || !strings.Contains(res.stdout, "could not reach the server "+fakeforge.URL) {
		t.Errorf("writes %v\n%s", r.S.Writes(), res)
	}
}

// A token the server rejects is a failure to run (exit 3) that says so.
func TestInProcessRejectedTokenExits3(t *testing.T) {
	r := newFakeRepo(t)
	n := r.open(example(t, "healthy.md"), governed...)
	res := r.run(t, opened(n), "token", "a-token-the-server-does-not-know")
	res.expect(t, exitcode.CannotRun, "error")
	if !strings.Contains(res.stdout, "rejected the token") {
		t.Errorf("%s", res)
	}
}

// moreHistory is an agent's report on over-budget.md: four more entries
// and a smaller estimate, which its guard run prunes.
func moreHistory(body string) string {
	i := strings.Index(body, "  current_task:")
	var more strings.Builder
	for k := range 4 {
		fmt.Fprintf(&more, "    - {agent: tester, action: ran the load tests (round %d), timestamp: \"2026-05-16T12:2%d:00Z\"}\n", 3+k, k)
	}
	body = body[:i] + more.String() + body[i:]
	return strings.Replace(body, "next_estimated_tokens: 1200", "next_estimated_tokens: 500", 1)
}

// prunable is an issue whose next run prunes: over-budget.md judged once,
// then reported on by the agent.
func prunable(t *testing.T, r *fakeRepo) int64 {
	t.Helper()
	n := r.open(example(t, "over-budget.md"), governed...)
	r.run(t, opened(n), "ledger-key", ledgerKey).expect(t, exitcode.Clean, "pass")
	r.tick(time.Minute)
	r.editBody(t, n, agent, moreHistory)
	r.tick(time.Minute)
	return n
}

// archivePart is a write that posts a part of issue n's archive.
func archivePart(n int64) func(fakeforge.Write) bool {
	return holds("CreateComment", fmt.Sprintf("%sissue=%d ", prune.MarkerPrefix, n))
}

// A prune writes in the crash-safe order: the archive first, then the
// body, and the status comment last.
func TestInProcessPruneWritesArchiveThenBodyThenStatus(t *testing.T) {
	r := newFakeRepo(t)
	n := prunable(t, r)
	res := r.run(t, edited(n, agent), "ledger-key", ledgerKey)
	res.expect(t, exitcode.Clean, "pass")
	status := func(w fakeforge.Write) bool {
		return (w.Method == "EditComment" || w.Method == "CreateComment") && strings.Contains(w.Text, issues.StatusMarker(n))
	}
	archive, lastArchive := indexOf(res.writes, archivePart(n)), lastIndexOf(res.writes, archivePart(n))
	body := indexOf(res.writes, func(w fakeforge.Write) bool { return w.Method == "EditBody" })
	st := lastIndexOf(res.writes, status)
	if res.outputs["pruned"] != "true" || archive < 0 || !(lastArchive < body && body < st) || indexOf(res.writes, status) < body {
		t.Errorf("want the archive, then the body, then the status comment: %v", res.writes)
	}
	var ids []int64
	if err := json.Unmarshal([]byte(res.outputs["archive-comment-ids"]), &ids); err != nil || len(ids) != 1 || ids[0] != res.writes[archive].ID {
		t.Errorf("archive-comment-ids %q, the archive is comment %d", res.outputs["archive-comment-ids"], res.writes[archive].ID)
	}
}

// A body write that loses the compare-and-swap to another writer's edit
// reads the issue again and decides on what is there now: the other edit
// is kept, the prune made once, and the archive not posted twice.
func TestInProcessBodyWriteLostToAConcurrentEditReadsAgain(t *testing.T) {
	r := newFakeRepo(t)
	n := prunable(t, r)
	r.S.Inject(fakeforge.Fault{Method: "EditBody", Times: 1, Before: func() {
		r.editBody(t, n, agent, func(body string) string { return body + "\nA note the agent added meanwhile.\n" })
	}})
	res := r.run(t, edited(n, agent), "ledger-key", ledgerKey)
	res.expect(t, exitcode.Clean, "pass")
	body := r.S.Issue(n).Body
	if !strings.Contains(res.stdout, "the issue body changed while the guard worked; reading it again (attempt 2 of") ||
		!strings.Contains(body, "A note the agent added meanwhile.") || res.outputs["pruned"] != "true" || strings.Contains(body, "round 3") {
		t.Errorf("the run after the conflict:\n%s\nbody:\n%s", res, body)
	}
	count := func(f func(fakeforge.Write) bool) int {
		return len(slices.DeleteFunc(slices.Clone(res.writes), func(w fakeforge.Write) bool { return !f(w) }))
	}
	guardEdits := count(func(w fakeforge.Write) bool { return w.Method == "EditBody" && w.User == issues.ActionsUser })
	if archives := count(archivePart(n)); archives != 1 || guardEdits != 1 {
		t.Errorf("%d archive parts and %d body writes landed, want one of each: %v", archives, guardEdits, res.writes)
	}
}

// A body write that loses every attempt ends the run as a failure to run
// (exit 3) after issuetx.Attempts attempts.
func TestInProcessConflictOnEveryAttemptExits3(t *testing.T) {
	r := newFakeRepo(t)
	n := prunable(t, r)
	r.S.Inject(fakeforge.Fault{Method: "EditBody", Status: 409})
	before := r.S.Calls("EditBody")
	res := r.run(t, edited(n, agent), "ledger-key", ledgerKey)
	res.expect(t, exitcode.CannotRun, "error")
	if got := r.S.Calls("EditBody") - before; got != issuetx.Attempts {
		t.Errorf("%d body writes tried, want %d attempts", got, issuetx.Attempts)
	}
}

// A first run on an issue opened from the template (issue: 0) fills in
// its number: the placeholder status comment first, then the body, then
// the status comment, whose ledger records the body the run left. That
// write is no edit: the dashboard, past unjudged-grace, calls the issue
// judged.
func TestInProcessFirstRunFillsTheIssueNumber(t *testing.T) {
	r := newFakeRepo(t)
	n := r.open(func(int64) string { return actiontest.Example(t, "healthy.md", 0) }, governed...)
	res := r.run(t, opened(n), "ledger-key", ledgerKey)
	res.expect(t, exitcode.Clean, "pass")
	is := r.S.Issue(n)
	placeholder := indexOf(res.writes, holds("CreateComment", issues.StatusMarker(n)))
	body := indexOf(res.writes, func(w fakeforge.Write) bool { return w.Method == "EditBody" })
	status := lastIndexOf(res.writes, holds("EditComment", issues.StatusMarker(n)))
	if !strings.Contains(is.Body, fmt.Sprintf("issue: %d\n", n)) || !(placeholder == 0 && placeholder < body && body < status) {
		t.Fatalf("the fill's writes: %v\nbody:\n%s", res.writes, is.Body)
	}
	c := r.S.Comments(n)[0]
	l, problem := ledger.Read(&c, n, ledger.SecretKeys([]byte(ledgerKey)))
	if l == nil || l.ContentVersion != is.ContentVersion {
		t.Errorf("the ledger records body version %v, the body is at %d (%s)", l, is.ContentVersion, problem)
	}
	r.tick(48 * time.Hour)
	dash := r.run(t, event{"workflow_dispatch", "", 0, owner}, "ledger-key", ledgerKey, "mode", "dashboard")
	dash.expect(t, exitcode.Clean, "pass")
	if strings.Contains(dash.stdout, "unjudged") {
		t.Errorf("the guard's own fill reads as an edit no run judged:\n%s", dash.stdout)
	}
}

// The dashboard names an issue whose body changed after the guard's last
// run for longer than unjudged-grace (a guard that stopped running), and
// a disabled workflow that runs the guard.
func TestInProcessDashboardNamesWhatNoGuardRunJudges(t *testing.T) {
	r := newFakeRepo(t)
	n := r.open(example(t, "healthy.md"), governed...)
	r.run(t, opened(n), "ledger-key", ledgerKey).expect(t, exitcode.Clean, "pass")
	r.editBody(t, n, agent, func(body string) string { return body + "\nEdited while the guard was off.\n" })
	r.S.Workflows = []port.Workflow{{ID: "gns-guard.yml", Path: ".gitea/workflows/gns-guard.yml", State: "disabled_manually"}}
	r.S.Files("")[".gitea/workflows/gns-guard.yml"] = []byte(guardWorkflow)
	r.tick(time.Minute)
	early := r.run(t, event{"workflow_dispatch", "", 0, owner}, "ledger-key", ledgerKey, "mode", "dashboard")
	early.expect(t, exitcode.Clean, "pass")
	if strings.Contains(early.stdout, "unjudged") {
		t.Errorf("unjudged within the grace:\n%s", early.stdout)
	}
	r.tick(time.Hour)
	late := r.run(t, event{"workflow_dispatch", "", 0, owner}, "ledger-key", ledgerKey, "mode", "dashboard")
	late.expect(t, exitcode.Clean, "pass")
	var dashboard fakeforge.Write
	if i := lastIndexOf(r.S.Writes(), func(w fakeforge.Write) bool { return w.Method == "EditIssue" || w.Method == "CreateIssue" }); i >= 0 {
		dashboard = r.S.Writes()[i]
	}
	if !strings.Contains(dashboard.Text, fmt.Sprintf("`#%d`", n)) || !strings.Contains(dashboard.Text, "unjudged: body v2, ledger v1") ||
		!strings.Contains(dashboard.Text, ".gitea/workflows/gns-guard.yml is disabled") {
		t.Errorf("the dashboard:\n%s", dashboard.Text)
	}
}

// grantsIn reads the repository's grant list, verified with the tests'
// key, as issue -> tokens granted.
func grantsIn(t *testing.T, r *fakeRepo) map[int64]int64 {
	t.Helper()
	list, problem := ledger.ReadGrants(r.S.Variables()[ledger.GrantsName], 0, ledger.SecretKeys([]byte(ledgerKey)))
	if problem != "" {
		t.Fatalf("the grant list does not verify: %s", problem)
	}
	out := map[int64]int64{}
	for _, g := range list.Grants {
		out[g.Issue] += g.Tokens
	}
	return out
}

// A run that grants reads the grant list anew with admin-token before it
// writes: the list handed to the job is as old as the job, and an issue
// granted meanwhile counts. The later issue is judged against it and
// granted nothing; the list keeps the earlier grant.
func TestInProcessGrantIsJudgedAgainstTheListReadAnew(t *testing.T) {
	r := newFakeRepo(t)
	in := []string{"admin-token", ownerToken, "ledger-key", ledgerKey, "repository-budget", "30000"}
	a := r.open(example(t, "healthy.md"), governed...)
	b := r.open(example(t, "healthy.md"), governed...)
	r.run(t, opened(a), in...).expect(t, exitcode.Clean, "pass")
	if got := grantsIn(t, r); got[a] != 20000 || len(got) != 1 {
		t.Fatalf("the first grant: %v", got)
	}
	reads := r.S.Calls("Variable")
	stale := r.runWith(t, opened(b), map[string]string{"GNS_GUARD_BUDGET": "grants:"}, in...)
	stale.expect(t, exitcode.Violation, "fail")
	if !slices.Contains(stale.rules(t), "repository-budget-exceeded") || !strings.Contains(stale.outputs["violations"], "from 20000 to 40000") {
		t.Errorf("the later issue was not judged against the earlier grant: %s", stale.outputs["violations"])
	}
	if got := grantsIn(t, r); got[a] != 20000 || len(got) != 1 || r.S.Calls("Variable") <= reads {
		t.Errorf("the grants after the race: %v (%d reads of a variable)", got, r.S.Calls("Variable")-reads)
	}
}

// Without admin-token a repository budget cannot be kept: the run says
// so, and writes no variable.
func TestInProcessRepositoryBudgetWithoutAdminTokenIsANote(t *testing.T) {
	r := newFakeRepo(t)
	n := r.open(example(t, "healthy.md"), governed...)
	res := r.run(t, opened(n), "ledger-key", ledgerKey, "repository-budget", "30000")
	res.expect(t, exitcode.Clean, "pass")
	if len(r.S.Variables()) != 0 || !strings.Contains(r.S.Comments(n)[0].Body, "admin-token is not") {
		t.Errorf("variables %v, status:\n%s", r.S.Variables(), r.S.Comments(n)[0].Body)
	}
}

// With admin-token the run anchors the issue's ledger in a repository
// variable, and the next run, handed the anchor, reads the comments it
// points to instead of the timeline.
func TestInProcessAnchoredIssueIsReadThroughItsAnchor(t *testing.T) {
	r := newFakeRepo(t)
	n := r.open(example(t, "healthy.md"), governed...)
	in := []string{"admin-token", ownerToken, "ledger-key", ledgerKey}
	r.run(t, opened(n), in...).expect(t, exitcode.Clean, "pass")
	r.tick(time.Minute)
	r.run(t, event{"issues", "reopened", n, owner}, in...).expect(t, exitcode.Clean, "pass")
	if r.S.Variables()[ledger.AnchorName(n)] == "" {
		t.Fatalf("no anchor written: %v", r.S.Variables())
	}
	r.tick(time.Minute)
	since := r.S.Calls("CommentsSince")
	res := r.run(t, event{"issues", "reopened", n, owner}, in...)
	res.expect(t, exitcode.Clean, "pass")
	if r.S.Calls("CommentsSince") != since+1 || !strings.Contains(res.stdout, "through its anchor") {
		t.Errorf("not read through the anchor:\n%s", res)
	}
}

// One run verifies the ledger record it finds once, however often it
// decides (the permission questions, the grants, the status comment's
// fixed point) and whoever else reads the record (the read through the
// hint, the stale check, liveness, the configuration stamp); a run that
// writes a new record verifies that one once too. Not parallel: it counts
// the process's verifications.
func TestInProcessRunVerifiesItsLedgerOnce(t *testing.T) {
	r := serialFakeRepo(t)
	n := r.open(example(t, "healthy.md"), governed...)
	r.run(t, opened(n), "ledger-key", ledgerKey).expect(t, exitcode.Clean, "pass")
	r.tick(time.Minute)
	r.run(t, edited(n, agent), "ledger-key", ledgerKey).expect(t, exitcode.Clean, "pass") // learns the agent
	for _, step := range []struct {
		name   string
		ev     event
		before func()
		want   int64
		writes bool
	}{
		{"a clean pass", event{"issues", "reopened", n, owner}, func() {}, 1, false},
		{"the agent's progress", edited(n, agent), func() {
			r.editBody(t, n, agent, func(body string) string {
				body = strings.Replace(body, "consumed: 6200", "consumed: 6900", 1)
				return strings.Replace(body, "remaining: 13800", "remaining: 13100", 1)
			})
		}, 2, true},
	} {
		r.tick(time.Minute)
		step.before()
		verified := ledger.Verifications()
		res := r.run(t, step.ev, "ledger-key", ledgerKey)
		res.expect(t, exitcode.Clean, "pass")
		if got := ledger.Verifications() - verified; got != step.want || (len(res.writes) > 0) != step.writes {
			t.Errorf("%s: %d ledger records verified, want %d; writes %v\n%s", step.name, got, step.want, res.writes, res)
		}
	}
}
