package containertest_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/containertest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// actionRepo is where the project is pushed on the test server, so that
// `uses: <admin>/gns-guard@v1` resolves there (DEFAULT_ACTIONS_URL = self).
const actionRepo = "gns-guard"

// jobLabel runs the guard's jobs in a container of the stand-in job image.
var jobLabel = "ubuntu-latest:docker://" + containertest.JobImage

// world is the shared engine, server and container-mode runner, with the
// project pushed to the server and tagged v1 (without its own workflows,
// which would run on the runner).
type world struct {
	e      *containertest.Engine
	s      *giteatest.Server
	runner *giteatest.Runner
	// uses is what a workflow's step says to run the action.
	uses string
	// tokens receives the tokens the workflows hand the test (see
	// tokenStep), to check that no log shows them.
	tokens *tokenSink
	// proxy stands between the runner's jobs and the server.
	proxy *cutProxy
}

var pushed struct {
	once   sync.Once
	err    error
	tokens *tokenSink
}

func requireWorld(t testing.TB) world {
	t.Helper()
	e := containertest.Require(t)
	s := giteatest.Require(t)
	proxy.once.Do(func() { proxy.p, proxy.err = newCutProxy(s.URL) })
	if proxy.err != nil {
		t.Fatal(proxy.err)
	}
	_, runner := giteatest.RequireRunnerWith(t, giteatest.RunnerOptions{
		Labels:     []string{jobLabel},
		DockerHost: e.Host,
		Network:    "host",
		Instance:   proxy.p.url,
	})
	pushed.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		_, pushed.err = containertest.PushEditedProject(ctx, s, s.AdminLogin, actionRepo, containertest.WithoutWorkflows, "v1")
		if pushed.err == nil {
			pushed.tokens, pushed.err = newTokenSink()
		}
	})
	if pushed.err != nil {
		t.Fatal(pushed.err)
	}
	return world{e: e, s: s, runner: runner, uses: s.AdminLogin + "/" + actionRepo + "@v1", tokens: pushed.tokens, proxy: proxy.p}
}

var proxy struct {
	once sync.Once
	p    *cutProxy
	err  error
}

// cutProxy is the server's address the runner registers with and hands
// its jobs: it passes everything on to the server, except API requests
// about a repository it was told to cut off, whose connections it closes
// unanswered, as a network failure would.
type cutProxy struct {
	url string
	mu  sync.Mutex
	cut map[string]bool // "/api/v1/repos/owner/name/"
}

func newCutProxy(target string) (*cutProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &cutProxy{url: "http://" + ln.Addr().String(), cut: map[string]bool{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { //nolint:errcheck // runs until the process ends
		if p.isCut(r.URL.Path) {
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					conn.Close()
					return
				}
			}
			panic(http.ErrAbortHandler)
		}
		rp.ServeHTTP(w, r)
	}))
	return p, nil
}

func (p *cutProxy) cutOff(owner, name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut["/api/v1/repos/"+owner+"/"+name+"/"] = true
}

func (p *cutProxy) isCut(path string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for prefix := range p.cut {
		if strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}

// tokenSink is a listener on 127.0.0.1 to which a workflow step posts the
// job's Actions token.
type tokenSink struct {
	url    string
	mu     sync.Mutex
	tokens []string
}

func newTokenSink() (*tokenSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	k := &tokenSink{url: "http://" + ln.Addr().String() + "/token"}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { //nolint:errcheck // runs until the process ends
		b, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
		if tok := strings.TrimSpace(string(b)); tok != "" {
			k.mu.Lock()
			k.tokens = append(k.tokens, tok)
			k.mu.Unlock()
		}
	}))
	return k, nil
}

func (k *tokenSink) all() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.tokens...)
}

// repo is a test repository driven by its owner, the administrator.
type repo struct {
	t           testing.TB
	w           world
	owner, name string
	deadline    time.Time
}

func (w world) newRepo(t testing.TB, workflow string) *repo {
	t.Helper()
	owner, name := w.s.NewRepo(t)
	r := &repo{t: t, w: w, owner: owner, name: name, deadline: time.Now().Add(15 * time.Minute)}
	r.must(http.MethodPost, r.path("/contents/.gitea/workflows/gns-guard.yml"), map[string]any{
		"content": base64.StdEncoding.EncodeToString([]byte(workflow)),
		"message": "Add the guard's workflow",
		"branch":  "main",
	}, nil)
	return r
}

func (r *repo) must(method, path string, in, out any) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.w.s.API(ctx, r.w.s.AdminToken, method, path, in, out); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) path(format string, args ...any) string {
	return "/repos/" + url.PathEscape(r.owner) + "/" + url.PathEscape(r.name) + fmt.Sprintf(format, args...)
}

type label struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

type issue struct {
	Number   int64   `json:"number"`
	Body     string  `json:"body"`
	IsLocked bool    `json:"is_locked"`
	Labels   []label `json:"labels"`
}

func (i issue) labelNames() []string {
	var names []string
	for _, l := range i.Labels {
		names = append(names, l.Name)
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

func (r *repo) secret(name, value string) {
	r.t.Helper()
	r.must(http.MethodPut, r.path("/actions/secrets/%s", name), map[string]any{"data": value}, nil)
}

func (r *repo) createLabel(name string) label {
	r.t.Helper()
	var l label
	r.must(http.MethodPost, r.path("/labels"), map[string]any{"name": name, "color": "#5319e7"}, &l)
	return l
}

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

func (r *repo) comments(n int64) []comment {
	r.t.Helper()
	var cs []comment
	r.must(http.MethodGet, r.path("/issues/%d/comments", n), nil, &cs)
	return cs
}

// issueRuns returns the runs of issue n, oldest first.
func (r *repo) issueRuns(n int64) []giteatest.WorkflowRun {
	r.t.Helper()
	var resp struct {
		Runs []giteatest.WorkflowRun `json:"workflow_runs"`
	}
	r.must(http.MethodGet, r.path("/actions/runs?limit=50"), nil, &resp)
	prefix := fmt.Sprintf("gns-guard #%d ", n)
	var out []giteatest.WorkflowRun
	for _, run := range resp.Runs {
		if strings.HasPrefix(run.Title, prefix) {
			out = append(out, run)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// waitRuns waits until issue n has had want runs, all finished, and
// returns them oldest first.
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
			r.t.Fatalf("gave up waiting for issue #%d's %d run(s); runs so far:\n%s\n--- runner output ---\n%s\n--- dockerd log ---\n%s",
				n, want, giteatest.RunList(runs), r.w.runner.LogTail(), r.w.e.LogTail())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// jobLog returns the log of the run's single job, as the Actions tab
// shows it.
func (r *repo) jobLog(run giteatest.WorkflowRun) string {
	r.t.Helper()
	log, err := r.w.s.JobLog(context.Background(), r.owner, r.name, run)
	if err != nil {
		r.t.Fatal(err)
	}
	return log
}
