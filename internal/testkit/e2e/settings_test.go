package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// The deadlocks a repository can get into through its own settings and
// through Gitea's statuses, on the real server with the real runner: a
// pull request's required check left pending by a comment's run, and a
// settings file that stops every run.

// shippedWorkflow is the guard's workflow with the triggers and the
// concurrency group of examples/workflows/gns-guard.yml, as users copy
// it, running the guard's binary with the inputs in with (guardWorkflow),
// under a run name that tells the issue and the event.
func shippedWorkflow(t *testing.T, bin string, with map[string]string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples", "workflows", "gns-guard.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var shipped workflow
	if err := yaml.Unmarshal(data, &shipped); err != nil {
		t.Fatal(err)
	}
	b, err := guardWorkflow(readActionSpec(t), bin, with)
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	wf.On, wf.Concurrency = shipped.On, shipped.Concurrency
	wf.RunName = "gns-guard #${{ github.event.issue.number || github.event.pull_request.number }} ${{ github.event_name }}.${{ github.event.action }}"
	out, err := yaml.Marshal(wf)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// botRepo is a repository guarded by the shipped workflow with a token of
// the guard's own account (a write collaborator, as on a fork's pull
// request the Actions token is read-only), and an outsider whose pull
// requests, from a fork, the guard judges.
type botRepo struct {
	*repo
	bot    user
	forker user
	fork   string // the fork's OWNER/NAME, once made
}

func newBotRepo(t *testing.T, settings string) *botRepo {
	t.Helper()
	s := giteatest.Require(t)
	owner, name := s.NewRepo(t)
	runner := s.RepoRunner(t, owner, name)
	r := &repo{t: t, srv: s, runner: runner, owner: owner, name: name, bin: buildGuard(t, t.TempDir()), deadline: time.Now().Add(6 * time.Minute)}
	bot := newAccount(t, s, "gnsbot")
	if err := s.AddCollaborator(context.Background(), owner, name, bot.login, giteatest.PermWrite); err != nil {
		t.Fatal(err)
	}
	r.setSecret("GNS_GUARD_TOKEN", bot.token)
	r.setSecret("GNS_GUARD_LEDGER_KEY", strings.Repeat("5a", 32))
	if settings != "" {
		r.putFile(".gitea/gns-guard.yml", []byte(settings))
	}
	r.putFile(".gitea/workflows/gns-guard.yml", shippedWorkflow(t, r.bin, map[string]string{
		"token": "${{ secrets.GNS_GUARD_TOKEN }}", "ledger-key": "${{ secrets.GNS_GUARD_LEDGER_KEY }}"}))
	return &botRepo{repo: r, bot: bot, forker: newAccount(t, s, "forker")}
}

// forked makes the outsider's fork, from main as it is now, the first
// time it is needed.
func (b *botRepo) forked() {
	b.t.Helper()
	if b.fork != "" {
		return
	}
	var fork struct {
		FullName string `json:"full_name"`
	}
	if err := b.as(b.forker, http.MethodPost, b.path("/forks"), map[string]any{}, &fork); err != nil {
		b.t.Fatalf("forking: %v", err)
	}
	b.fork = fork.FullName
}

// ownPull opens a pull request from a new branch of the repository itself,
// as its owner, that writes content to path.
func (b *botRepo) ownPull(branch, path, content, title string) int64 {
	b.t.Helper()
	var cur struct {
		SHA string `json:"sha"`
	}
	b.must(http.MethodGet, b.path("/contents/%s?ref=main", path), nil, &cur)
	b.must(http.MethodPut, b.path("/contents/%s", path), map[string]any{
		"content": base64.StdEncoding.EncodeToString([]byte(content)), "sha": cur.SHA, "branch": "main", "new_branch": branch, "message": title}, nil)
	var pr struct{ Number int64 }
	b.must(http.MethodPost, b.path("/pulls"), map[string]any{"head": branch, "base": "main", "title": title}, &pr)
	return pr.Number
}

// status is the guard's status comment on issue or pull request n: its
// marker, written by the guard's account.
func (b *botRepo) status(n int64) comment {
	b.t.Helper()
	for _, c := range b.comments(n) {
		if c.User.Login == b.bot.login && strings.Contains(c.Body, fmt.Sprintf("<!-- gns-guard:status issue=%d -->", n)) {
			return c
		}
	}
	b.t.Fatalf("#%d has no status comment of the guard's:\n%v", n, bodies(b.comments(n)))
	return comment{}
}

// protect makes main take changes only through pull requests whose guard
// check passed.
func (b *botRepo) protect() {
	b.must(http.MethodPost, b.path("/branch_protections"), map[string]any{
		"rule_name": "main", "enable_push": false, "enable_status_check": true, "status_check_contexts": []string{guardContext}}, nil)
}

// pull opens a pull request from a new branch of the fork that writes
// content to path, and returns its number.
func (b *botRepo) pull(branch, path, content, title string) int64 {
	b.t.Helper()
	b.forked()
	in := map[string]any{"content": base64.StdEncoding.EncodeToString([]byte(content)), "branch": "main", "new_branch": branch, "message": title}
	var cur struct {
		SHA string `json:"sha"`
	}
	if b.as(b.forker, http.MethodGet, "/repos/"+b.fork+"/contents/"+path+"?ref=main", nil, &cur) == nil {
		in["sha"] = cur.SHA
		if err := b.as(b.forker, http.MethodPut, "/repos/"+b.fork+"/contents/"+path, in, nil); err != nil {
			b.t.Fatal(err)
		}
	} else if err := b.as(b.forker, http.MethodPost, "/repos/"+b.fork+"/contents/"+path, in, nil); err != nil {
		b.t.Fatal(err)
	}
	var pr struct{ Number int64 }
	if err := b.as(b.forker, http.MethodPost, b.path("/pulls"), map[string]any{"head": b.forker.login + ":" + branch, "base": "main", "title": title}, &pr); err != nil {
		b.t.Fatal(err)
	}
	return pr.Number
}

// push commits new content for path to the fork's branch.
func (b *botRepo) push(branch, path, content string) {
	b.t.Helper()
	var cur struct {
		SHA string `json:"sha"`
	}
	if err := b.as(b.forker, http.MethodGet, "/repos/"+b.fork+"/contents/"+path+"?ref="+branch, nil, &cur); err != nil {
		b.t.Fatal(err)
	}
	if err := b.as(b.forker, http.MethodPut, "/repos/"+b.fork+"/contents/"+path, map[string]any{
		"content": base64.StdEncoding.EncodeToString([]byte(content)), "sha": cur.SHA, "branch": branch, "message": "Fix " + path}, nil); err != nil {
		b.t.Fatal(err)
	}
}

// settle waits until every run of the repository has finished and no new
// one has been recorded for a few seconds (the guard's own writes start
// runs of their own).
func (b *botRepo) settle() []giteatest.WorkflowRun {
	b.t.Helper()
	quiet, last := 0, -1
	for {
		runs := b.runs()
		done := !slices.ContainsFunc(runs, func(r giteatest.WorkflowRun) bool { return r.Status != "completed" })
		if done && len(runs) == last {
			quiet++
		} else {
			quiet = 0
		}
		if quiet >= 4 {
			return runs
		}
		last = len(runs)
		if time.Now().After(b.deadline) {
			b.t.Fatalf("the runs did not settle:\n%s\n--- runner output ---\n%s", giteatest.RunList(runs), b.runner.LogTail())
		}
		time.Sleep(time.Second)
	}
}

// check is the state of the guard's required check on pull request n's
// head, as the default branch's protection reads it: the newest status of
// its context.
func (b *botRepo) check(n int64) (state, description string) {
	b.t.Helper()
	var pr struct {
		Head struct {
			SHA string `json:"sha"`
		} `json:"head"`
	}
	b.must(http.MethodGet, b.path("/pulls/%d", n), nil, &pr)
	var combined struct {
		Statuses []struct {
			Context     string `json:"context"`
			State       string `json:"status"`
			Description string `json:"description"`
		} `json:"statuses"`
	}
	b.must(http.MethodGet, b.path("/commits/%s/status", pr.Head.SHA), nil, &combined)
	for _, s := range combined.Statuses {
		if s.Context == guardContext {
			return s.State, s.Description
		}
	}
	return "", "no status"
}

// newest is issue n's newest run of event ("issue_comment.created").
func (b *botRepo) newest(n int64, event string) giteatest.WorkflowRun {
	b.t.Helper()
	runs := b.issueRuns(n)
	for i := len(runs) - 1; i >= 0; i-- {
		if strings.HasSuffix(runs[i].Title, " "+event) {
			return runs[i]
		}
	}
	b.t.Fatalf("issue #%d has no %s run:\n%s", n, event, giteatest.RunList(runs))
	return giteatest.WorkflowRun{}
}

// mergeRefused says why merging pull request n is refused ("" when it
// merged), once Gitea has checked its mergeability.
func (b *botRepo) mergeRefused(n int64) string {
	for {
		err := b.call(http.MethodPost, b.path("/pulls/%d/merge", n), map[string]any{"Do": "merge"}, nil)
		if err == nil {
			return ""
		}
		if !strings.Contains(err.Error(), "try again later") || time.Now().After(b.deadline) {
			return err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// addLabel adds a label (created when missing) to issue or pull request n
// as the owner, an approver.
func (b *botRepo) addLabel(n int64, name string) {
	b.t.Helper()
	var all []label
	b.must(http.MethodGet, b.path("/labels?limit=50"), nil, &all)
	i := slices.IndexFunc(all, func(l label) bool { return l.Name == name })
	var l label
	if i < 0 {
		l = b.createLabel(name)
	} else {
		l = all[i]
	}
	b.must(http.MethodPost, b.path("/issues/%d/labels", n), map[string]any{"labels": []int64{l.ID}}, nil)
}

// TestGuardsOwnCommentLeavesNoPendingCheck: the guard, writing with its
// own account's token, comments on the pull requests it judges; each
// comment starts an issue_comment run. With the shipped workflow those
// runs queue apart from the pull_request_target runs, so the required
// check ends as the guard judged: success on the clean pull request, which
// merges, failure on the one that changes .kilo/. (With one concurrency
// group for both, Gitea 1.26 gives the comment's run, unblocked when the
// pull_request_target run ends, a pending status under that run's check,
// and nothing replaces it: both checks stay pending.)
func TestGuardsOwnCommentLeavesNoPendingCheck(t *testing.T) {
	t.Parallel()
	b := newBotRepo(t, "")
	b.protect()
	good := b.pull("docs", "docs/notes.md", "a note\n", "Notes on the API")
	bad := b.pull("agents", ".kilo/agents/reviewer.md", "a reviewer\n", "A reviewer of my own")
	runs := b.settle()
	if !slices.ContainsFunc(runs, func(r giteatest.WorkflowRun) bool { return strings.Contains(r.Title, "issue_comment") }) {
		t.Fatalf("the guard's comments started no run: the test shows nothing\n%s", giteatest.RunList(runs))
	}
	for _, c := range []struct {
		n    int64
		want string
	}{{good, "success"}, {bad, "failure"}} {
		if state, desc := b.check(c.n); state != c.want {
			t.Errorf("pull request #%d: the guard's check is %s (%q), want %s\n%s", c.n, state, desc, c.want, giteatest.RunList(runs))
		}
	}
	if why := b.mergeRefused(good); why != "" {
		t.Errorf("the clean pull request does not merge: %s", why)
	}
	if why := b.mergeRefused(bad); !strings.Contains(why, "Not all required status checks successful") {
		t.Errorf("merging the pull request that changes .kilo/: %q, want it refused for the check", why)
	}
}

// TestSettingsTypoRefusedAndItsFixMerged: a typo in .gitea/gns-guard.yml
// merged by hand stops every run: the issue's status comment says it could
// not judge the issue (no longer "all clear"), and a new issue gets no
// status comment. The pull request that fixes the file is judged with the
// settings' defaults, passes once an approver opens the protected path,
// and merges; the issue is judged again. A pull request that brings a
// typo fails its check, naming the file, the key and its line, even with
// the approver's label, and merges once it is fixed.
func TestSettingsTypoRefusedAndItsFixMerged(t *testing.T) {
	t.Parallel()
	b := newBotRepo(t, "prune-threshold: 0.8\n")
	const issue = 1
	b.openIssue(issue, "Rate limits", numbered(t, example(t, "healthy.md"), issue), b.createLabel("cascade::depth-2"), b.createLabel("size::medium"))
	b.settle()
	if st := b.status(issue); !strings.Contains(st.Body, "all clear") {
		t.Fatalf("the issue's status comment before the typo:\n%s", st.Body)
	}

	// The owner commits a typo straight to main.
	b.replaceFile(".gitea/gns-guard.yml", []byte("prune-threshold: 0.8\nhistroy-tail: 4\n"))
	b.comment(issue, "Carrying on.")
	const fresh = 2
	b.openIssue(fresh, "Another task", numbered(t, example(t, "healthy.md"), fresh))
	runs := b.settle()
	last := b.newest(issue, "issue_comment.created")
	if log := b.jobLog(last); last.Conclusion != "failure" || !strings.Contains(log, ".gitea/gns-guard.yml:2:1: histroy-tail: unknown key") {
		t.Errorf("the run does not name the file, the key and its line:\n%s", log)
	}
	st := b.status(issue)
	if strings.Contains(st.Body, "all clear") || !strings.Contains(st.Body, "could not judge this issue") || !strings.Contains(st.Body, "histroy-tail") {
		t.Errorf("the status comment while the settings do not load:\n%s", st.Body)
	}
	if cs := b.comments(fresh); len(cs) != 0 {
		t.Errorf("a status comment was created while the settings do not load: %v\n%s", bodies(cs), giteatest.RunList(runs))
	}

	// The fix, through a protected main: judged with the defaults, opened
	// by an approver's label, merged.
	b.protect()
	fix := b.ownPull("fix", ".gitea/gns-guard.yml", "prune-threshold: 0.8\nhistory-tail: 4\n", "Fix the settings")
	b.settle()
	if state, _ := b.check(fix); state != "failure" {
		t.Errorf("the fix's check before an approver opened the protected path: %s, want failure (protected-path)", state)
	}
	b.addLabel(fix, "permission::evolve-system")
	b.settle()
	if state, desc := b.check(fix); state != "success" {
		t.Fatalf("the fix's check with the approver's label: %s (%q)\n%s", state, desc, giteatest.RunList(b.runs()))
	}
	if why := b.mergeRefused(fix); why != "" {
		t.Fatalf("the fix does not merge: %s", why)
	}
	b.comment(issue, "Settings fixed.")
	b.settle()
	if run := b.newest(issue, "issue_comment.created"); run.Conclusion != "success" {
		t.Errorf("the run on a comment after the fix: %s", run)
	}
	if st := b.status(issue); !strings.Contains(st.Body, "all clear") {
		t.Errorf("the issue is not judged again after the fix:\n%s", st.Body)
	}

	// A pull request that brings a typo fails its check, also with the
	// approver's label, and merges once fixed.
	typo := b.pull("typo", ".gitea/gns-guard.yml", "prune-threshold: 0.8\nhistory-tail: 4\nprotected-pathz: [.kilo/]\n", "Tune the settings")
	b.addLabel(typo, "permission::evolve-system")
	runs = b.settle()
	if state, _ := b.check(typo); state != "failure" {
		t.Errorf("the typo's check: %s, want failure\n%s", state, giteatest.RunList(runs))
	}
	st = b.status(typo)
	for _, want := range []string{"settings-invalid", ".gitea/gns-guard.yml:3:1: protected-pathz: unknown key"} {
		if !strings.Contains(st.Body, want) {
			t.Errorf("the pull request's status comment lacks %q:\n%s", want, st.Body)
		}
	}
	if why := b.mergeRefused(typo); !strings.Contains(why, "Not all required status checks successful") {
		t.Errorf("merging the typo: %q, want it refused for the check", why)
	}
	b.push("typo", ".gitea/gns-guard.yml", "prune-threshold: 0.8\nhistory-tail: 4\nprotected-paths: [.kilo/, .gitea/workflows/, .gitea/gns-guard.yml]\n")
	b.settle()
	if state, desc := b.check(typo); state != "success" {
		t.Fatalf("the fixed pull request's check: %s (%q)\n%s\nthe push's run:\n%s", state, desc, giteatest.RunList(b.runs()), b.jobLog(b.newest(typo, "pull_request_target.synchronized")))
	}
	if why := b.mergeRefused(typo); why != "" {
		t.Errorf("the fixed pull request does not merge: %s", why)
	}
}
