package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// repo is a test repository on the real Gitea, driven as its owner (a
// person, not the Actions bot).
type repo struct {
	t      *testing.T
	srv    *giteatest.Server
	runner *giteatest.Runner
	owner  string
	name   string
	bin    string // the guard's binary the workflow runs
	// token is the owner's token, for what the owner does; initToken the
	// one init is given. Empty: the site administrator's.
	token, initToken string
	// deadline bounds every wait for workflow runs in the test.
	deadline time.Time
}

type label struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

type issue struct {
	Number   int64   `json:"number"`
	Title    string  `json:"title"`
	Body     string  `json:"body"`
	State    string  `json:"state"`
	IsLocked bool    `json:"is_locked"`
	Labels   []label `json:"labels"`
}

func (i issue) labelNames() []string {
	names := make([]string, len(i.Labels))
	for k, l := range i.Labels {
		names[k] = l.Name
	}
	sort.Strings(names)
	return names
}

type comment struct {
	ID   int64  `json:"id"`
	Body string `json:"body"`
	User struct {
		Login string `json:"login"`
	} `json:"user"`
}

// giteatest.WorkflowRun is an entry of GET /repos/{owner}/{repo}/actions/runs.
// call sends a JSON request to /api/v1+path as the repository's owner and
// decodes the answer into out: a *string takes the raw text.
func (r *repo) call(method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return r.srv.API(ctx, r.ownerToken(), method, path, in, out)
}

// ownerToken is the owner's token: r.token, else the site
// administrator's.
func (r *repo) ownerToken() string {
	if r.token != "" {
		return r.token
	}
	return r.srv.AdminToken
}

// must is call that fails the test on error.
func (r *repo) must(method, path string, in, out any) {
	r.t.Helper()
	if err := r.call(method, path, in, out); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) path(format string, args ...any) string {
	return "/repos/" + url.PathEscape(r.owner) + "/" + url.PathEscape(r.name) + fmt.Sprintf(format, args...)
}

// putFile commits a file to main through the contents API.
func (r *repo) putFile(path string, content []byte) {
	r.t.Helper()
	r.must(http.MethodPost, r.path("/contents/%s", path), map[string]any{
		"content": base64.StdEncoding.EncodeToString(content),
		"message": "Add " + path,
		"branch":  "main",
	}, nil)
}

func (r *repo) createLabel(name string) label {
	r.t.Helper()
	var l label
	r.must(http.MethodPost, r.path("/labels"), map[string]any{"name": name, "color": "#5319e7"}, &l)
	return l
}

// openIssue opens an issue with labels and checks it got the number want
// (checkpoints name their issue, so the tests know numbers in advance).
func (r *repo) openIssue(want int64, title, body string, labels ...label) {
	r.t.Helper()
	ids := []int64{}
	for _, l := range labels {
		ids = append(ids, l.ID)
	}
	var is issue
	r.must(http.MethodPost, r.path("/issues"), map[string]any{"title": title, "body": body, "labels": ids}, &is)
	if is.Number != want {
		r.t.Fatalf("the issue %q got number %d, the test expected %d", title, is.Number, want)
	}
}

func (r *repo) issue(n int64) issue {
	r.t.Helper()
	var is issue
	r.must(http.MethodGet, r.path("/issues/%d", n), nil, &is)
	return is
}

func (r *repo) editBody(n int64, body string) {
	r.t.Helper()
	r.must(http.MethodPatch, r.path("/issues/%d", n), map[string]any{"body": body}, nil)
}

// replaceLabels sets the issue's labels in one change (one event).
func (r *repo) replaceLabels(n int64, labels ...label) {
	r.t.Helper()
	ids := []int64{}
	for _, l := range labels {
		ids = append(ids, l.ID)
	}
	r.must(http.MethodPut, r.path("/issues/%d/labels", n), map[string]any{"labels": ids}, nil)
}

func (r *repo) removeLabel(n int64, l label) {
	r.t.Helper()
	r.must(http.MethodDelete, r.path("/issues/%d/labels/%d", n, l.ID), nil, nil)
}

func (r *repo) comment(n int64, body string) comment {
	r.t.Helper()
	var c comment
	r.must(http.MethodPost, r.path("/issues/%d/comments", n), map[string]any{"body": body}, &c)
	return c
}

func (r *repo) editComment(id int64, body string) {
	r.t.Helper()
	r.must(http.MethodPatch, r.path("/issues/comments/%d", id), map[string]any{"body": body}, nil)
}

func (r *repo) comments(n int64) []comment {
	r.t.Helper()
	var cs []comment
	r.must(http.MethodGet, r.path("/issues/%d/comments", n), nil, &cs)
	return cs
}

// runs lists the repository's workflow runs, oldest first.
func (r *repo) runs() []giteatest.WorkflowRun {
	r.t.Helper()
	runs, err := r.srv.WorkflowRuns(context.Background(), r.owner, r.name)
	if err != nil {
		r.t.Fatal(err)
	}
	return runs
}

// issueRuns returns the runs of issue n, oldest first.
func (r *repo) issueRuns(n int64) []giteatest.WorkflowRun {
	r.t.Helper()
	prefix := fmt.Sprintf("gns-guard #%d ", n)
	var out []giteatest.WorkflowRun
	for _, run := range r.runs() {
		if strings.HasPrefix(run.Title, prefix) {
			out = append(out, run)
		}
	}
	return out
}

// waitRuns waits until issue n has had exactly want runs, all finished, and
// returns them oldest first. More runs than expected fail the test at once:
// something triggered runs nobody asked for.
func (r *repo) waitRuns(n int64, want int) []giteatest.WorkflowRun {
	r.t.Helper()
	for {
		runs := r.issueRuns(n)
		if len(runs) > want {
			r.t.Fatalf("issue #%d had %d workflow runs, want %d:\n%s", n, len(runs), want, giteatest.RunList(runs))
		}
		done := len(runs) == want
		for _, run := range runs {
			if run.Status != "completed" {
				done = false
			}
		}
		if done {
			return runs
		}
		if time.Now().After(r.deadline) {
			r.t.Fatalf("gave up waiting for issue #%d's %d workflow run(s) to finish; runs so far:\n%s\n--- runner output ---\n%s",
				n, want, giteatest.RunList(runs), r.runner.LogTail())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// rerun re-runs a finished run, as the Actions tab's "Re-run all jobs"
// does, waits for it to finish again and returns it. (Gitea 1.26 reports
// no attempt number; the re-run is queued before the request returns.)
func (r *repo) rerun(run giteatest.WorkflowRun) giteatest.WorkflowRun {
	r.t.Helper()
	var started giteatest.WorkflowRun
	r.must(http.MethodPost, r.path("/actions/runs/%d/rerun", run.ID), nil, &started)
	if started.Status == "completed" {
		r.t.Fatalf("re-running %s: the answer says it is already finished: %s", run, started)
	}
	for {
		var now giteatest.WorkflowRun
		r.must(http.MethodGet, r.path("/actions/runs/%d", run.ID), nil, &now)
		if now.Status == "completed" {
			return now
		}
		if time.Now().After(r.deadline) {
			r.t.Fatalf("gave up waiting for the re-run of %s; now %s\n--- runner output ---\n%s", run, now, r.runner.LogTail())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// jobLog returns the log of the run's single job.
func (r *repo) jobLog(run giteatest.WorkflowRun) string {
	r.t.Helper()
	log, err := r.srv.JobLog(context.Background(), r.owner, r.name, run)
	if err != nil {
		r.t.Fatal(err)
	}
	return log
}

// newGuardRepo creates a repository on the shared server whose workflow
// runs the guard (see guardWorkflow) with the inputs in with, on a runner
// of its own.
func newGuardRepo(t *testing.T, with map[string]string) *repo {
	t.Helper()
	s := giteatest.Require(t)
	bin := buildGuard(t, t.TempDir())
	owner, name := s.NewRepo(t)
	runner := s.RepoRunner(t, owner, name)
	r := &repo{t: t, srv: s, runner: runner, owner: owner, name: name, bin: bin,
		deadline: time.Now().Add(waitBudget)}
	wf, err := guardWorkflow(readActionSpec(t), bin, with)
	if err != nil {
		t.Fatal(err)
	}
	r.putFile(".gitea/workflows/gns-guard.yml", wf)
	return r
}

// setSecret sets a repository secret for its workflows.
func (r *repo) setSecret(name, value string) {
	r.t.Helper()
	r.must(http.MethodPut, r.path("/actions/secrets/%s", name), map[string]any{"data": value}, nil)
}

// built is the binary buildGuard builds once per test process.
var built struct {
	once sync.Once
	path string
	err  error
}

// buildGuard builds cmd/gns-guard as the action's Dockerfile does (see
// TestDockerfileBuild), once per test process, copies it into dir and
// returns the copy's absolute path.
func buildGuard(t *testing.T, dir string) string {
	t.Helper()
	built.once.Do(func() {
		tmp, err := os.MkdirTemp("", "gns-guard-e2e-")
		if err != nil {
			built.err = err
			return
		}
		giteatest.AtExit(func() { os.RemoveAll(tmp) })
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		out := filepath.Join(tmp, "gns-guard")
		cmd := exec.CommandContext(ctx, "go", "build", "-tags", "nometer", "-trimpath", "-ldflags=-s -w", "-o", out, "./cmd/gns-guard")
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("building gns-guard: %v\n%s", err, b)
			return
		}
		built.path = out
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	bin, err := filepath.Abs(filepath.Join(dir, "gns-guard"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(built.path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}
