package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// The attacks and controls of the threat model (docs/contract.md#4b-the-trusted-ledger)
// that need a run: a branch workflow reads the guard's secrets, and the
// guard's pull_request_target check gates the merge of a fork's pull
// request.

// user is an account of the test server with its token.
type user struct{ login, token string }

func newAccount(t *testing.T, s *giteatest.Server, base string) user {
	t.Helper()
	login := fmt.Sprintf("%s%d", base, time.Now().UnixNano()%1e9)
	tok, err := s.NewUser(context.Background(), login, false)
	if err != nil {
		t.Fatal(err)
	}
	return user{login, tok}
}

// as sends a request to /api/v1+path with u's token.
func (r *repo) as(u user, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return r.srv.API(ctx, u.token, method, path, in, out)
}

// waitRunsOf waits until the repository has want runs that match, all
// finished, and returns them oldest first.
func (r *repo) waitRunsOf(what string, match func(giteatest.WorkflowRun) bool, want int) []giteatest.WorkflowRun {
	r.t.Helper()
	for {
		var runs []giteatest.WorkflowRun
		done := true
		for _, run := range r.runs() {
			if match(run) {
				runs = append(runs, run)
				done = done && run.Status == "completed"
			}
		}
		if len(runs) == want && done {
			return runs
		}
		if len(runs) > want || time.Now().After(r.deadline) {
			r.t.Fatalf("want %d finished %s runs; runs so far:\n%s\n--- runner output ---\n%s", want, what, giteatest.RunList(r.runs()), r.runner.LogTail())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestBranchWorkflowReadsTheGuardsSecrets shows the attack that makes
// Code write untrusted: a write collaborator pushes a workflow to a branch
// of its own (main untouched), the runner hands it every repository
// secret, and the job log, which the collaborator reads over the API,
// shows them base64-encoded: the runner masks only their raw values.
func TestBranchWorkflowReadsTheGuardsSecrets(t *testing.T) {
	t.Parallel()
	s := giteatest.Require(t)
	owner, name := s.NewRepo(t)
	runner := s.RepoRunner(t, owner, name)
	r := &repo{t: t, srv: s, runner: runner, owner: owner, name: name, deadline: time.Now().Add(waitBudget)}
	const ledgerKey, adminToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "the-owners-token-1f2e3d"
	r.setSecret("GNS_GUARD_LEDGER_KEY", ledgerKey)
	r.setSecret("GNS_GUARD_ADMIN_TOKEN", adminToken)
	mallory := newAccount(t, s, "mallory")
	if err := s.AddCollaborator(context.Background(), owner, name, mallory.login, giteatest.PermWrite); err != nil {
		t.Fatal(err)
	}

	lint := `on: push
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: printf '%s %s' "$K" "$A" | base64 -w0; echo
        env:
          K: ${{ secrets.GNS_GUARD_LEDGER_KEY }}
          A: ${{ secrets.GNS_GUARD_ADMIN_TOKEN }}
`
	err := r.as(mallory, http.MethodPost, r.path("/contents/.gitea/workflows/lint.yml"), map[string]any{
		"content": base64.StdEncoding.EncodeToString([]byte(lint)), "new_branch": "lint", "message": "Add a linter"}, nil)
	if err != nil {
		t.Fatalf("a write collaborator could not push a branch: %v", err)
	}
	run := r.waitRunsOf("push", func(run giteatest.WorkflowRun) bool { return run.Event == "push" }, 1)[0]
	var jobs struct {
		Jobs []struct{ ID int64 } `json:"jobs"`
	}
	var log string
	if err := r.as(mallory, http.MethodGet, r.path("/actions/runs/%d/jobs", run.ID), nil, &jobs); err != nil || len(jobs.Jobs) != 1 {
		t.Fatalf("the collaborator lists the run's jobs: %v %+v", err, jobs)
	}
	if err := r.as(mallory, http.MethodGet, r.path("/actions/jobs/%d/logs", jobs.Jobs[0].ID), nil, &log); err != nil {
		t.Fatalf("the collaborator reads the job log: %v", err)
	}
	if strings.Contains(log, ledgerKey) || strings.Contains(log, adminToken) {
		t.Error("the runner did not mask the raw secrets")
	}
	want := base64.StdEncoding.EncodeToString([]byte(ledgerKey + " " + adminToken))
	if !strings.Contains(log, want) {
		t.Fatalf("the job log does not show the secrets base64-encoded (%s):\n%s", want, log)
	}
	if err := r.as(mallory, http.MethodGet, r.path("/actions/secrets"), nil, nil); err == nil || !strings.Contains(err.Error(), "HTTP 403") {
		t.Errorf("the collaborator lists the secrets over the API: %v", err)
	}
}

// guardContext is the status the guard's job gets on a pull_request_target
// run: the workflow's name, the job's, the event.
const guardContext = "gns-guard / guard (pull_request_target)"

// TestForkPullMergeWaitsForTheGuardsCheck checks the control that keeps a
// pull request from stripping the guard: the guard runs on
// pull_request_target (the base branch's workflow, with its own account's
// token, since the Actions token is read-only on a fork's pull request),
// and main's protection requires its exact status. A fork's pull request
// the guard passes merges; one whose guard run fails does not; one titled
// [skip ci], which starts no run, does not either.
func TestForkPullMergeWaitsForTheGuardsCheck(t *testing.T) {
	t.Parallel()
	s := giteatest.Require(t)
	owner, name := s.NewRepo(t)
	runner := s.RepoRunner(t, owner, name)
	r := &repo{t: t, srv: s, runner: runner, owner: owner, name: name, bin: buildGuard(t, t.TempDir()), deadline: time.Now().Add(3 * time.Minute)}
	bot := newAccount(t, s, "gnsbot")
	if err := s.AddCollaborator(context.Background(), owner, name, bot.login, giteatest.PermWrite); err != nil {
		t.Fatal(err)
	}
	r.setSecret("GNS_GUARD_TOKEN", bot.token)
	r.setSecret("GNS_GUARD_LEDGER_KEY", strings.Repeat("5a", 32))
	wf, err := guardWorkflow(readActionSpec(t), r.bin, map[string]string{
		"token": "${{ secrets.GNS_GUARD_TOKEN }}", "ledger-key": "${{ secrets.GNS_GUARD_LEDGER_KEY }}"})
	if err != nil {
		t.Fatal(err)
	}
	wf = pullTargetOnly(t, wf)
	r.putFile(".gitea/gns-guard.yml", []byte("protected-paths: [.kilo/]\n"))
	r.putFile(".gitea/workflows/gns-guard.yml", wf)
	r.must(http.MethodPost, r.path("/branch_protections"), map[string]any{
		"rule_name": "main", "enable_push": false, "enable_status_check": true, "status_check_contexts": []string{guardContext}}, nil)

	forker := newAccount(t, s, "forker")
	var fork struct {
		FullName string `json:"full_name"`
	}
	if err := r.as(forker, http.MethodPost, r.path("/forks"), map[string]any{}, &fork); err != nil {
		t.Fatalf("forking: %v", err)
	}
	pull := func(branch, path, title string) int64 {
		t.Helper()
		if err := r.as(forker, http.MethodPost, "/repos/"+fork.FullName+"/contents/"+path, map[string]any{
			"content": base64.StdEncoding.EncodeToString([]byte("a change\n")), "branch": "main", "new_branch": branch, "message": title}, nil); err != nil {
			t.Fatal(err)
		}
		var pr struct{ Number int64 }
		if err := r.as(forker, http.MethodPost, r.path("/pulls"), map[string]any{"head": forker.login + ":" + branch, "base": "main", "title": title}, &pr); err != nil {
			t.Fatal(err)
		}
		return pr.Number
	}
	// Gitea lists a pull_request_target run under its event, pull_request:
	// the run's name tells the pull request.
	runsOf := func(n int64) func(giteatest.WorkflowRun) bool {
		return func(run giteatest.WorkflowRun) bool { return run.Title == fmt.Sprintf("gns-guard pull request #%d", n) }
	}
	good := pull("docs", "docs/notes.md", "Notes on the API")
	if run := r.waitRunsOf("guard", runsOf(good), 1)[0]; run.Conclusion != "success" {
		t.Fatalf("the guard's run on a fork's clean pull request: %s", run)
	}
	// The guard fails the pull request and labels it permission::violation
	// with its own account's token: the label starts a second run, which
	// must not turn the check green.
	bad := pull("agents", ".kilo/agents/reviewer.md", "A reviewer of my own")
	for _, run := range r.waitRunsOf("guard", runsOf(bad), 2) {
		if run.Conclusion != "failure" {
			t.Errorf("a guard run on the pull request that changes .kilo/ without permission::evolve-system: %s\n%s", run, r.jobLog(run))
		}
	}
	skipped := pull("skip", ".kilo/agents/tester.md", "[skip ci] A tester of my own")

	// Merging is refused for the check ("Not all required status checks
	// successful"), once Gitea has checked the pull request's mergeability
	// in the background ("Please try again later" until then).
	refusal := func(n int64) error {
		for {
			err := r.call(http.MethodPost, r.path("/pulls/%d/merge", n), map[string]any{"Do": "merge"}, nil)
			if err == nil || !strings.Contains(err.Error(), "try again later") || time.Now().After(r.deadline) {
				return err
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for _, c := range []struct {
		what string
		n    int64
	}{{"whose guard run failed", bad}, {"titled [skip ci], with no guard run,", skipped}} {
		if err := refusal(c.n); err == nil || !strings.Contains(err.Error(), "Not all required status checks successful") {
			t.Errorf("merging the pull request %s: %v; want it refused for the required check", c.what, err)
		}
	}
	if runs := r.runs(); slices.ContainsFunc(runs, runsOf(skipped)) {
		t.Errorf("[skip ci] started a run:\n%s", giteatest.RunList(runs))
	}
	r.mergePull(good) // the control: the check is the only thing in the way
}

// pullTargetOnly makes the generated workflow run on pull_request_target
// only, under a run name that needs no issue.
func pullTargetOnly(t *testing.T, b []byte) []byte {
	t.Helper()
	var wf workflow
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	wf.RunName = "gns-guard pull request #${{ github.event.pull_request.number }}"
	wf.On = map[string]trigger{"pull_request_target": {Types: []string{"opened", "edited", "reopened", "synchronize", "labeled", "unlabeled"}}}
	wf.Concurrency = &concurrency{Group: "gns-guard-${{ github.event.pull_request.number }}"}
	out, err := yaml.Marshal(wf)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
