package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// actionsUser is the login Gitea gives the Actions token: the author of
// everything the guard writes.
const actionsUser = "gitea-actions"

// waitBudget bounds the whole test's waiting for workflow runs. The runs
// take under a minute in all on an idle machine; the bound is generous
// because CI runs other real-Gitea packages beside this one.
const waitBudget = 12 * time.Minute

// A valid agent result comment (docs/contract.md §5b) for the example checkpoints.
const (
	agentHeader = "## 🔄 code-reviewer | phase:implementation | depth:1\n\nReviewed the rate limiter: two small fixes asked for.\n"
	agentFooter = `<!-- GNS_EVENT {"agent":"code-reviewer","invocation":"inv-20260516-1340-c1","event_type":"subagent_result","phase":"implementation","depth":1,"budget":{"before":13800,"consumed":900,"remaining":12900},"status":"done","verdict":"changes-requested","files_changed":["gateway/limiter.go"],"key_stats":{"review_comments":2},"next_agent":"lead-developer"} -->`
)

// TestGuardEndToEnd drives issues through the guard's workflow on a real
// Gitea with a real runner and checks what a user sees: each run's result,
// the labels, the one status comment, archive comments and the body after
// pruning, and that the guard's own writes start no runs.
func TestGuardEndToEnd(t *testing.T) {
	t.Parallel()
	// The repository's owner, who relabels and approves below, is the
	// approver; the Actions token cannot ask the server who is an admin.
	s0 := giteatest.Require(t)
	r := newGuardRepo(t, map[string]string{"budget-admins": s0.AdminLogin})
	s, owner, name := r.srv, r.owner, r.name
	bin := r.bin

	depth2 := r.createLabel("cascade::depth-2")
	depth3 := r.createLabel("cascade::depth-3")
	medium := r.createLabel("size::medium")
	phase := r.createLabel("phase::implementation")
	exhausted := r.createLabel("budget::exhausted")
	std := []label{depth2, medium, phase} // the labels the example checkpoints list

	const (
		story    = 1 // healthy, then too deep, relabelled, agent comments
		deep     = 2 // opened too deep
		pruned   = 3 // budget nearly spent: pruned
		spent    = 4 // budget used up
		approval = 5 // a person's budget::exhausted label, then its removal
		plain    = 6 // not governed; opened last
	)
	healthy := example(t, "healthy.md")
	r.openIssue(story, "Rate limiting (story)", numbered(t, healthy, story), std...)
	r.openIssue(deep, "Rate limiting (too deep)", numbered(t, example(t, "depth-exceeded.md"), deep), std...)
	// next_estimated_tokens lowered so that the pruned phase's budget
	// (floor(2600 * 0.5) = 1300) still covers the next call.
	overBudget := replaceOnce(t, example(t, "over-budget.md"), "next_estimated_tokens: 1200", "next_estimated_tokens: 500")
	r.openIssue(pruned, "Rate limiting (pruned)", numbered(t, overBudget, pruned), std...)
	spentBody := replaceOnce(t, numbered(t, healthy, spent),
		"total: 20000\n    consumed: 6200\n    remaining: 13800", "total: 20000\n    consumed: 20000\n    remaining: 0")
	r.openIssue(spent, "Rate limiting (spent)", spentBody, std...)
	r.openIssue(approval, "Rate limiting (awaiting approval)", numbered(t, healthy, approval), append(std, exhausted)...)

	// Opening an issue with labels is two events: opened, and the labels.
	runsOf := map[int64]int{story: 2, deep: 2, pruned: 2, spent: 2, approval: 2}

	t.Run("story", func(t *testing.T) {
		r := r.with(t)
		n := int64(story)
		runs := r.waitRuns(n, runsOf[n])
		wantOpened(t, runs, "success")
		if log := r.jobLog(runs[1]); !strings.Contains(log, "outputs: result=pass pruned=false budget-remaining=13800") {
			t.Errorf("the next step did not read the guard's outputs of a clean pass:\n%s", log)
		}
		// The opening run that ran first (the other may have been
		// replaced in the concurrency group) posted the status comment
		// with the ledger: the issue, its timeline, the repository's
		// configuration file and its posture (both once per commit), who
		// can write the issue (kept in the record), the post and a re-read
		// that settles a concurrent duplicate. The
		// posture warns (main is not protected, the ledger key is no
		// secret) and fails nothing.
		var logs string
		for _, run := range runs {
			if run.Conclusion != "cancelled" {
				logs += r.jobLog(run)
			}
		}
		posture := regexp.MustCompile(`posture judged for commit \S+: (\d+) of 12 check\(s\) do not hold \(read with (\d+) request\(s\), (\d+) of them with admin-token\)`).FindStringSubmatch(logs)
		if !strings.Contains(logs, "wrote: posted the status comment") || posture == nil {
			t.Errorf("the opening runs' logs lack the status comment's post or the posture:\n%s", logs)
		} else if want := fmt.Sprintf(`pass \(0 violation\(s\), [1-9]\d* warning\(s\)\), %d API request\(s\)`, 8+atoi(t, posture[2])); !regexp.MustCompile(want).MatchString(logs) {
			t.Errorf("the opening runs' logs lack %s:\n%s", want, logs)
		} else {
			t.Logf("the posture check of the first run for the commit, with the Actions token: %s requests", posture[2])
		}
		is := r.issue(n)
		if !slices.Equal(is.labelNames(), names(std)) || withoutHint(is.Body) != numbered(t, healthy, story) || !hinted(is.Body) {
			t.Errorf("a healthy issue was changed (but for the read hint its first run writes): labels %v, body changed: %v, hint %v", is.labelNames(), withoutHint(is.Body) != numbered(t, healthy, story), hinted(is.Body))
		}
		if cs := r.comments(n); len(cs) != 1 || !strings.Contains(cs[0].Body, "all clear") || !strings.Contains(cs[0].Body, "<!-- gns-guard:ledger v2 ") {
			t.Errorf("a healthy issue: want the one status comment, all clear, holding the ledger: %v", bodies(cs))
		}

		// An agent posts a well-formed result: its run records it among
		// the accepted results (docs/ledger.md#accepted-results), one
		// write of the status comment.
		r.comment(n, agentHeader+"\n"+agentFooter)
		runsOf[n]++
		runs = r.waitRuns(n, runsOf[n])
		recorded := wantLast(t, runs, "issue_comment.created", "success")
		if log := r.jobLog(recorded); !regexp.MustCompile(`pass \(0 violation\(s\), \d+ warning\(s\)\), 3 API request\(s\)`).MatchString(log) ||
			!strings.Contains(log, "wrote: updated the status comment") {
			t.Errorf("the run of a result did not record it in two reads and one write:\n%s", log)
		}
		// A note after it. docs/contract.md §6: a clean pass costs at most
		// two requests, the Actions token's user known without asking,
		// the ledger found through the read hint.
		r.comment(n, "Thanks, picking up the review next.")
		runsOf[n]++
		runs = r.waitRuns(n, runsOf[n])
		clean := wantLast(t, runs, "issue_comment.created", "success")
		if log := r.jobLog(clean); !regexp.MustCompile(`pass \(0 violation\(s\), \d+ warning\(s\)\), 2 API request\(s\)`).MatchString(log) ||
			!strings.Contains(log, "no writes needed") || !strings.Contains(log, "posture as the ledger recorded it") {
			t.Errorf("a clean pass with the Actions token did not cost exactly 2 API requests and no write:\n%s", log)
		}

		// The checkpoint is edited to a depth over the cascade limit.
		tooDeep := replaceOnce(t, numbered(t, healthy, story), "depth: 1\n", "depth: 3\n")
		tooDeep = replaceOnce(t, tooDeep, "agent_chain: [orchestrator, lead-developer]", "agent_chain: [orchestrator, lead-developer, developer, tester]")
		r.editBody(n, tooDeep)
		runsOf[n]++
		runs = r.waitRuns(n, runsOf[n])
		last := wantLast(t, runs, "issues.edited", "failure")
		log := r.jobLog(last)
		if !strings.Contains(log, fmt.Sprintf("issue#%d:", n)) || !strings.Contains(log, "[depth-exceeded]") {
			t.Errorf("the failed run's log does not name the violation as issue#%d:line:col: ... [depth-exceeded]:\n%s", n, log)
		}
		if !strings.Contains(log, "outputs: result=fail ") {
			t.Errorf("the next step did not read result=fail:\n%s", log)
		}
		is = r.issue(n)
		if !slices.Contains(is.labelNames(), "cascade::depth-exceeded") {
			t.Errorf("labels %v, want cascade::depth-exceeded added", is.labelNames())
		}
		if is.IsLocked {
			t.Error("the issue is locked, but the Actions token cannot lock and no admin-token was given")
		}
		status := statusComment(t, r.comments(n), n)
		for _, want := range []string{"depth-exceeded", "depth 3 is over the cascade limit of 2", "could not be locked"} {
			if !strings.Contains(status.Body, want) {
				t.Errorf("the status comment does not say %q:\n%s", want, status.Body)
			}
		}

		// A person raises the limit: cascade::depth-2 becomes
		// cascade::depth-3 in one change, leaving the guard's label alone.
		r.replaceLabels(n, depth3, medium, phase, labelNamed(t, is, "cascade::depth-exceeded"))
		runsOf[n]++
		runs = r.waitRuns(n, runsOf[n])
		wantLast(t, runs, "issues.label_updated", "success")
		is = r.issue(n)
		if want := []string{"cascade::depth-3", "phase::implementation", "size::medium"}; !slices.Equal(is.labelNames(), want) {
			t.Errorf("labels %v, want %v (the guard removes cascade::depth-exceeded once the depth is allowed)", is.labelNames(), want)
		}
		resolved := statusComment(t, r.comments(n), n)
		if resolved.ID != status.ID {
			t.Errorf("the status comment was replaced (%d, then %d), want it edited in place", status.ID, resolved.ID)
		}
		if !strings.Contains(resolved.Body, "all clear") {
			t.Errorf("the status comment does not say all is clear:\n%s", resolved.Body)
		}

		// An agent posts a result without its machine-readable footer, then
		// fixes it.
		c := r.comment(n, agentHeader)
		runsOf[n]++
		runs = r.waitRuns(n, runsOf[n])
		wantLast(t, runs, "issue_comment.created", "failure")
		broken := statusComment(t, r.comments(n), n)
		if broken.ID != status.ID || !strings.Contains(broken.Body, "comment-protocol") {
			t.Errorf("status comment %d, want %d reporting comment-protocol:\n%s", broken.ID, status.ID, broken.Body)
		}
		r.editComment(c.ID, agentHeader+"\n"+agentFooter)
		runsOf[n]++
		runs = r.waitRuns(n, runsOf[n])
		wantLast(t, runs, "issue_comment.edited", "success")
		fixed := statusComment(t, r.comments(n), n)
		if fixed.ID != status.ID || !strings.Contains(fixed.Body, "all clear") {
			t.Errorf("status comment %d, want %d saying all clear:\n%s", fixed.ID, status.ID, fixed.Body)
		}
		// The agent's edit dropped the read hint: the passing run writes
		// it back, and changes nothing else.
		if got := r.issue(n).Body; withoutHint(got) != tooDeep {
			t.Errorf("the guard changed a body it had no reason to change:\n%s", got)
		}

		// An agent hides consumption: the edit's payload carries no
		// previous body, and the ledger catches it.
		login := fmt.Sprintf("agent-e2e-%d", n)
		token, err := s.NewUser(context.Background(), login, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddCollaborator(context.Background(), owner, name, login, giteatest.PermWrite); err != nil {
			t.Fatal(err)
		}
		hidden := replaceOnce(t, tooDeep, "consumed: 6200\n    remaining: 13800", "consumed: 1000\n    remaining: 19000")
		if err := s.API(context.Background(), token, http.MethodPatch, r.path("/issues/%d", n), map[string]any{"body": hidden}, nil); err != nil {
			t.Fatal(err)
		}
		runsOf[n]++
		runs = r.waitRuns(n, runsOf[n])
		last = wantLast(t, runs, "issues.edited", "failure")
		if log := r.jobLog(last); !strings.Contains(log, "[checkpoint-tampered]") || !strings.Contains(log, "budget.consumed went down 6200 → 1000") {
			t.Errorf("the tamper run's log does not name checkpoint-tampered with the numbers:\n%s", log)
		}
		if !slices.Contains(r.issue(n).labelNames(), "permission::violation") {
			t.Errorf("labels %v, want permission::violation", r.issue(n).labelNames())
		}
	})

	t.Run("opened too deep", func(t *testing.T) {
		r := r.with(t)
		n := int64(deep)
		wantOpened(t, r.waitRuns(n, runsOf[n]), "failure")
		is := r.issue(n)
		if !slices.Contains(is.labelNames(), "cascade::depth-exceeded") {
			t.Errorf("labels %v, want cascade::depth-exceeded (created by the guard)", is.labelNames())
		}
		if is.IsLocked {
			t.Error("the issue is locked, but the Actions token cannot lock")
		}
		cs := r.comments(n)
		status := statusComment(t, cs, n)
		if !strings.Contains(status.Body, "depth 3 is over the cascade limit of 2") {
			t.Errorf("the status comment does not give the numbers:\n%s", status.Body)
		}
		if len(cs) != 1 {
			t.Errorf("two runs left %d comments, want the one status comment: %v", len(cs), bodies(cs))
		}
	})

	t.Run("pruned", func(t *testing.T) {
		r := r.with(t)
		n := int64(pruned)
		runs := r.waitRuns(n, runsOf[n])
		wantOpened(t, runs, "success")
		prunedRuns := 0
		for _, run := range runs {
			if run.Conclusion != "cancelled" && strings.Contains(r.jobLog(run), "outputs: result=pass pruned=true ") {
				prunedRuns++
			}
		}
		if prunedRuns != 1 {
			t.Errorf("%d runs say they pruned, want exactly one (a later run finds nothing left to prune)", prunedRuns)
		}
		before := numbered(t, overBudget, pruned)
		is := r.issue(n)
		cs := r.comments(n)
		var archives []comment
		for _, c := range cs {
			if strings.Contains(c.Body, fmt.Sprintf("<!-- gns-guard:archive issue=%d phase=implementation part=1/1 sha256=", n)) {
				archives = append(archives, c)
			}
		}
		if len(archives) != 1 || len(cs) != 2 {
			t.Fatalf("want two comments, the archive and the status comment with the ledger; got %d archive(s) among %d comment(s): %v", len(archives), len(cs), bodies(cs))
		}
		a := archives[0]
		if a.User.Login != actionsUser || !strings.HasPrefix(a.Body, "## GNS-2 Checkpoint Archive") {
			t.Errorf("archive by %s, starting %.40q", a.User.Login, a.Body)
		}
		for i := 1; i <= 11; i++ { // the entries pruned away
			if inv := fmt.Sprintf("inv-%03d", i); !strings.Contains(a.Body, inv) {
				t.Errorf("the archive lacks %s", inv)
			}
		}

		pre, block, post := splitBlock(t, before)
		gotPre, gotBlock, gotPost := splitBlock(t, is.Body)
		if gotPre != pre || gotPost != post {
			t.Errorf("pruning changed the body outside the checkpoint block:\n%s", is.Body)
		}
		var old, now checkpointDoc
		decodeBlock(t, block, &old)
		decodeBlock(t, gotBlock, &now)
		c := now.Checkpoint
		if len(c.History) != 0 || len(c.HistoryTail) != 3 {
			t.Fatalf("after pruning: %d history and %d history_tail entries, want 0 and 3:\n%s", len(c.History), len(c.HistoryTail), gotBlock)
		}
		for i, e := range c.HistoryTail {
			want := old.Checkpoint.History[len(old.Checkpoint.History)-3+i]
			if e.Agent != want.Agent || e.Action != want.Action || e.Timestamp != want.Timestamp {
				t.Errorf("history_tail[%d] = %+v, want %+v", i, e, want)
			}
		}
		if b := c.Budget; b.Total != 1300 || b.Consumed != 0 || b.Remaining != 1300 {
			t.Errorf("budget after pruning %+v, want a new phase of floor(2600 * 0.5) = 1300 tokens, none consumed", b)
		}

		// Nothing was lost: the archive plus the tail is the whole history.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "history", "--repo", owner+"/"+name, "--issue", fmt.Sprint(n),
			"--server", s.URL, "--token", s.AdminToken, "--trust", actionsUser, "--format", "json")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("gns-guard history: %v\n%s", err, out)
		}
		var hist []struct {
			Invocation string `json:"invocation"`
			Action     string `json:"action"`
		}
		if err := json.Unmarshal(out, &hist); err != nil {
			t.Fatalf("gns-guard history: %v\n%s", err, out)
		}
		if len(hist) != len(old.Checkpoint.History) {
			t.Fatalf("gns-guard history rebuilt %d entries, want %d:\n%s", len(hist), len(old.Checkpoint.History), out)
		}
		for i, h := range hist {
			if want := old.Checkpoint.History[i]; h.Action != want.Action {
				t.Errorf("history entry %d is %q, want %q", i+1, h.Action, want.Action)
			}
		}
	})

	t.Run("budget used up", func(t *testing.T) {
		r := r.with(t)
		n := int64(spent)
		wantOpened(t, r.waitRuns(n, runsOf[n]), "failure")
		is := r.issue(n)
		if !slices.Contains(is.labelNames(), "budget::exhausted") {
			t.Errorf("labels %v, want budget::exhausted", is.labelNames())
		}
		cs := r.comments(n)
		status := statusComment(t, cs, n)
		if !strings.Contains(status.Body, "budget-exhausted") || !strings.Contains(status.Body, "20000 of 20000 tokens consumed") {
			t.Errorf("the status comment does not report the used-up budget:\n%s", status.Body)
		}
		// Past the prune threshold, but an exhausted budget is not pruned:
		// a new phase would erase the record of what was spent.
		if len(cs) != 1 || is.Body != spentBody {
			t.Errorf("want the body untouched and only the status comment; body changed: %v, comments: %v", is.Body != spentBody, bodies(cs))
		}
	})

	t.Run("approval by removing budget::exhausted", func(t *testing.T) {
		r := r.with(t)
		n := int64(approval)
		wantOpened(t, r.waitRuns(n, runsOf[n]), "failure")
		status := statusComment(t, r.comments(n), n)
		if !strings.Contains(status.Body, "budget::exhausted label is set") {
			t.Errorf("the status comment does not say the label holds the workflow:\n%s", status.Body)
		}
		r.removeLabel(n, exhausted)
		runsOf[n]++
		runs := r.waitRuns(n, runsOf[n])
		wantLast(t, runs, "issues.label_updated", "success")
		if got := r.issue(n).labelNames(); !slices.Equal(got, names(std)) {
			t.Errorf("labels %v after the approval, want %v", got, names(std))
		}
		resolved := statusComment(t, r.comments(n), n)
		if resolved.ID != status.ID || !strings.Contains(resolved.Body, "all clear") {
			t.Errorf("status comment %d, want %d edited to all clear:\n%s", resolved.ID, status.ID, resolved.Body)
		}

		// Re-running the run that failed on the label: its payload still
		// lists budget::exhausted, but the guard reads today's labels.
		again := r.rerun(runs[1])
		if again.Conclusion != "success" {
			t.Errorf("the re-run of the run the label failed ended %s, want success: it must judge today's labels", again.Conclusion)
		}
		if got := r.comments(n); len(got) != 1 || got[0].Body != resolved.Body {
			t.Errorf("the re-run changed the comments: %v", bodies(got))
		}
	})

	// An issue that is not governed passes and gets nothing. Its run comes
	// after every event above, so once it has finished, any run the guard's
	// own writes had started would be listed.
	r.openIssue(plain, "A question about the docs", "Where is the rate limit documented?")
	runsOf[plain] = 1
	wantLast(t, r.waitRuns(plain, 1), "issues.opened", "success")
	if cs := r.comments(plain); len(cs) != 0 {
		t.Errorf("the guard commented on an issue it does not govern: %v", bodies(cs))
	}
	total := 0
	for _, k := range runsOf {
		total += k
	}
	if all := r.runs(); len(all) != total {
		t.Errorf("the repository had %d workflow runs, want %d (one per event a person caused; the guard's writes start none):\n%s", len(all), total, giteatest.RunList(all))
	}
}

// TestGuardLocksWithAdminToken gives the guard an admin-token, as
// examples/workflows/gns-guard.yml does, and checks that a too-deep issue
// gets locked.
func TestGuardLocksWithAdminToken(t *testing.T) {
	t.Parallel()
	r := newGuardRepo(t, map[string]string{"admin-token": "${{ secrets.GNS_GUARD_ADMIN_TOKEN }}"})
	r.setSecret("GNS_GUARD_ADMIN_TOKEN", r.srv.AdminToken)
	std := []label{r.createLabel("cascade::depth-2"), r.createLabel("size::medium"), r.createLabel("phase::implementation")}

	r.openIssue(1, "Rate limiting (too deep)", numbered(t, example(t, "depth-exceeded.md"), 1), std...)
	wantOpened(t, r.waitRuns(1, 2), "failure")
	is := r.issue(1)
	if !is.IsLocked {
		t.Error("the too-deep issue is not locked, though the guard had an admin token")
	}
	if !slices.Contains(is.labelNames(), "cascade::depth-exceeded") {
		t.Errorf("labels %v, want cascade::depth-exceeded", is.labelNames())
	}
	status := statusComment(t, r.comments(1), 1)
	if strings.Contains(status.Body, "could not be locked") {
		t.Errorf("the status comment reports a refused lock:\n%s", status.Body)
	}

	// Locking starts no run (Gitea has no trigger for it).
	r.openIssue(2, "A question", "Is the limiter per key?")
	wantLast(t, r.waitRuns(2, 1), "issues.opened", "success")
	if all := r.runs(); len(all) != 3 {
		t.Errorf("%d workflow runs, want 3:\n%s", len(all), giteatest.RunList(all))
	}

	// The admin token is the owner's: the guard anchors its ledger in the
	// repository variable GNS_GUARD_ANCHOR_3, and the runner hands the
	// next run that anchor through action.yml's runs.env: a clean pass
	// follows it (two requests, no timeline read).
	r.openIssue(3, "Rate limiting (anchored)", numbered(t, example(t, "healthy.md"), 3), std...)
	wantLast(t, r.waitRuns(3, 2), "issues.label_updated", "success")
	var anchor struct {
		Data string `json:"data"`
	}
	r.must(http.MethodGet, r.path("/actions/variables/GNS_GUARD_ANCHOR_3"), nil, &anchor)
	if !strings.HasPrefix(anchor.Data, "gns-guard:anchor v1 {") {
		t.Fatalf("no anchor after the guard's first run: %q", anchor.Data)
	}
	// Closing and reopening changes nothing the guard keeps (a title is
	// part of the task: its change moves the record).
	r.must(http.MethodPatch, r.path("/issues/3"), map[string]any{"state": "closed"}, nil)
	r.must(http.MethodPatch, r.path("/issues/3"), map[string]any{"state": "open"}, nil)
	clean := wantLast(t, r.waitRuns(3, 3), "issues.reopened", "success")
	if log := r.jobLog(clean); !strings.Contains(log, "through its anchor GNS_GUARD_ANCHOR_3") || !strings.Contains(log, "2 API request(s)") || !strings.Contains(log, "no writes needed") {
		t.Errorf("a clean pass did not follow the anchor the runner handed over in 2 requests:\n%s", log)
	}
}

// with returns the repository handle for a subtest.
func (r *repo) with(t *testing.T) *repo {
	c := *r
	c.t = t
	return &c
}

func example(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples", "issues", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// numbered makes an example body name issue n (the examples name issue 42).
func numbered(t *testing.T, body string, n int64) string {
	t.Helper()
	return replaceOnce(t, body, "  issue: 42\n", fmt.Sprintf("  issue: %d\n", n))
}

// hintLine is the read hint line the guard keeps first in the checkpoint
// block (docs/ledger.md#the-read-hint).
var hintLine = regexp.MustCompile("(?m)^# gns-guard: comments since \\S+\n")

// withoutHint is body without its read hint; hinted says it has one.
func withoutHint(body string) string { return hintLine.ReplaceAllString(body, "") }

func hinted(body string) bool { return hintLine.MatchString(body) }

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	if k := strings.Count(s, old); k != 1 {
		t.Fatalf("the text has %q %d times, want once", old, k)
	}
	return strings.Replace(s, old, new, 1)
}

func names(ls []label) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Name
	}
	sort.Strings(out)
	return out
}

func labelNamed(t *testing.T, is issue, name string) label {
	t.Helper()
	for _, l := range is.Labels {
		if l.Name == name {
			return l
		}
	}
	t.Fatalf("issue #%d has no label %s", is.Number, name)
	return label{}
}

func bodies(cs []comment) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("#%d by %s: %.80q", c.ID, c.User.Login, c.Body)
	}
	return out
}

// statusComment returns the issue's one sticky status comment, written by
// the Actions user.
func statusComment(t *testing.T, cs []comment, n int64) comment {
	t.Helper()
	marker := fmt.Sprintf("<!-- gns-guard:status issue=%d -->", n)
	var found []comment
	for _, c := range cs {
		if strings.Contains(c.Body, marker) {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Fatalf("issue #%d has %d status comments, want exactly one: %v", n, len(found), bodies(cs))
	}
	if found[0].User.Login != actionsUser {
		t.Errorf("the status comment is by %s, want %s", found[0].User.Login, actionsUser)
	}
	return found[0]
}

// wantOpened checks the runs of an issue opened with labels (two events:
// opened, then label_updated). The workflow queues one run per issue, and
// Gitea, like GitHub, cancels a queued run when a newer one joins the
// queue: the opened run may end cancelled, never with another result. The
// guard reads the issue live, so the newer run judges everything.
func wantOpened(t *testing.T, runs []giteatest.WorkflowRun, conclusion string) {
	t.Helper()
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2:\n%s", len(runs), giteatest.RunList(runs))
	}
	first, last := runs[0], runs[1]
	if !strings.HasSuffix(first.Title, " issues.opened") || !strings.HasSuffix(last.Title, " issues.label_updated") {
		t.Errorf("runs for opened, then label_updated expected:\n%s", giteatest.RunList(runs))
	}
	if last.Conclusion != conclusion || (first.Conclusion != conclusion && first.Conclusion != "cancelled") {
		t.Errorf("want %s (the first may be cancelled):\n%s", conclusion, giteatest.RunList(runs))
	}
}

// wantLast checks the newest run: its event.action and its conclusion.
func wantLast(t *testing.T, runs []giteatest.WorkflowRun, event, conclusion string) giteatest.WorkflowRun {
	t.Helper()
	last := runs[len(runs)-1]
	if !strings.HasSuffix(last.Title, " "+event) || last.Conclusion != conclusion {
		t.Errorf("the last run is %s, want event %s with conclusion %s", last, event, conclusion)
	}
	return last
}

type historyEntry struct {
	Agent     string `yaml:"agent"`
	Action    string `yaml:"action"`
	Timestamp string `yaml:"timestamp"`
}

type checkpointDoc struct {
	Checkpoint struct {
		Budget struct {
			Total     int64 `yaml:"total"`
			Consumed  int64 `yaml:"consumed"`
			Remaining int64 `yaml:"remaining"`
		} `yaml:"budget"`
		History     []historyEntry `yaml:"history"`
		HistoryTail []historyEntry `yaml:"history_tail"`
	} `yaml:"checkpoint"`
}

// splitBlock splits an example body around its one ```yaml block: the text
// before the block, the YAML inside it, and the text from the closing fence
// on.
func splitBlock(t *testing.T, body string) (pre, block, post string) {
	t.Helper()
	const open, closing = "```yaml\n", "\n```\n"
	i := strings.Index(body, open)
	if i < 0 {
		t.Fatalf("no ```yaml block in:\n%s", body)
	}
	j := strings.Index(body[i+len(open):], closing)
	if j < 0 {
		t.Fatalf("the ```yaml block is not closed in:\n%s", body)
	}
	j += i + len(open)
	return body[:i], body[i+len(open) : j+1], body[j+1:]
}

func decodeBlock(t *testing.T, block string, into *checkpointDoc) {
	t.Helper()
	if err := yaml.Unmarshal([]byte(block), into); err != nil {
		t.Fatalf("the checkpoint block is not YAML: %v\n%s", err, block)
	}
}

// atoi reads a number the guard logged.
func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
