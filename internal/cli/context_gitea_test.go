package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/exitcode"

	"github.com/gns-guard/gns-guard/internal/cli"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// One shared Gitea for the package's real-Gitea tests, started on first use.
func TestMain(m *testing.M) { giteatest.Main(m) }

// countingProxy forwards to the server and records every request.
type countingProxy struct {
	mu    sync.Mutex
	paths []string
	srv   *httptest.Server
	// clock, when set, is the server's clock as the client reads it (the
	// answers' Date header): a test's injected time, not the wall clock.
	clock func() time.Time
}

func newCountingProxy(t testing.TB, target string) *countingProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(res *http.Response) error {
		if p.clock != nil {
			res.Header.Set("Date", p.clock().UTC().Format(http.TimeFormat))
		}
		return nil
	}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.paths = append(p.paths, r.Method+" "+r.URL.RequestURI())
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *countingProxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.paths...)
}

// gnsContext runs `gns-guard context` in this process.
func gnsContext(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := cli.System()
	env.Stdout, env.Stderr = &out, &errb
	env.Getenv = func(string) string { return "" }
	env.AppendFile = func(string, []byte) error { return nil }
	code = cli.Main(context.Background(), append([]string{"context"}, args...), env)
	return out.String(), errb.String(), code
}

// contextJSON is the part of `context --format json` these tests read.
type contextJSON struct {
	Fits     bool `json:"fits"`
	Tokens   int  `json:"tokens"`
	Cap      int  `json:"cap"`
	Sections []struct {
		Priority  int    `json:"priority"`
		Kind      string `json:"kind"`
		CommentID int64  `json:"comment_id"`
		Status    string `json:"status"`
	} `json:"sections"`
	Skipped []struct {
		ID   int64  `json:"id"`
		What string `json:"what"`
	} `json:"guard_comments_left_out"`
	Guard struct {
		ContextTokens    int64 `json:"context_tokens"`
		CheckpointTokens int   `json:"checkpoint_tokens"`
		CommentTokens    int   `json:"comment_tokens"`
	} `json:"guard"`
	Text string `json:"text"`
}

func decodeContext(t *testing.T, stdout string) contextJSON {
	t.Helper()
	var c contextJSON
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	return c
}

func checkpointFor(n int64, labels string, remaining, next int) string {
	return fmt.Sprintf("# Rate limits\n\n```yaml\ncheckpoint:\n  version: 2\n  issue: %d\n  phase: implementation\n  depth: 1\n  last_agent: lead-developer\n  last_invocation: inv-7\n  budget:\n    total: 20000\n    consumed: %d\n    remaining: %d\n  state:\n    labels: [%s]\n    assignee: lead-developer\n  history_tail:\n    - {agent: orchestrator, action: split the task, timestamp: \"2026-05-16T12:58:00Z\"}\n  current_task: wire the limiter into the gateway config\n  next_agent: code-reviewer\n  next_estimated_tokens: %d\n  created_at: \"2026-05-16T12:50:00Z\"\n```\n",
		n, 20000-remaining, remaining, labels, next)
}

func agentResult(i int, next string) string {
	return fmt.Sprintf("## 🔄 lead-developer | phase:implementation | depth:1\n\nStep %d: implemented part of the limiter, with tests and a benchmark; details below.\n\n%s\n<!-- GNS_EVENT {\"agent\":\"lead-developer\",\"invocation\":\"inv-%d\",\"event_type\":\"subagent_result\",\"phase\":\"implementation\",\"depth\":1,\"budget\":{\"before\":9000,\"consumed\":100,\"remaining\":8900},\"status\":\"done\",\"verdict\":\"ok\",\"files_changed\":[\"bucket.go\"],\"key_stats\":{\"tests\":%d},\"next_agent\":%q} -->",
		i, strings.Repeat("- measured the gateway again; p99 41 ms, no errors\n", 20), i, i, next)
}

// TestContextRequestsOnALongIssue reads an issue of 1,000 comments: the
// load holds its last three, and the whole read costs at most 3 requests
// (the issue, the tail of its timeline), counted at the HTTP level.
func TestContextRequestsOnALongIssue(t *testing.T) {
	t.Parallel()
	s := giteatest.Require(t)
	comments := make([]string, 1000)
	for i := range comments {
		comments[i] = fmt.Sprintf("progress note %d: nothing to report", i+1)
	}
	comments[997] = agentResult(998, "code-reviewer")
	owner, name, n := s.SeedIssue(t, "long issue", checkpointFor(1, "", 13800, 3500), comments)
	proxy := newCountingProxy(t, s.URL)

	// No guard has judged the seeded issue: a long grace keeps liveness
	// from refusing it (TestLivenessCannotBeSwitchedOff judges that).
	stdout, stderr, code := gnsContext(t, "--repo", owner+"/"+name, "--issue", strconv.FormatInt(n, 10),
		"--server", proxy.srv.URL, "--token", s.AdminToken, "--format", "json", "--unjudged-grace", "87600h")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	reqs := proxy.requests()
	t.Logf("requests for an issue of 1,000 comments: %d: %v", len(reqs), reqs)
	// The repository's configuration file, the issue, the timeline's tail.
	if len(reqs) > 4 {
		t.Errorf("%d requests, at most 4 allowed: %v", len(reqs), reqs)
	}
	c := decodeContext(t, stdout)
	if !c.Fits || c.Tokens > c.Cap {
		t.Errorf("tokens %d of cap %d", c.Tokens, c.Cap)
	}
	// The previous agent's result fits the cap: it is loaded whole.
	for _, want := range []string{"## P1 Previous agent's result: lead-developer", "progress note 999:", "progress note 1000:", "Step 998: implemented part of the limiter", "p99 41 ms"} {
		if !strings.Contains(c.Text, want) {
			t.Errorf("no %q in the load:\n%s", want, c.Text)
		}
	}
	if strings.Contains(c.Text, "progress note 997:") {
		t.Errorf("more than the last 3 comments loaded:\n%s", c.Text)
	}
}

// TestContextUnreachableServer exits 3 with a message naming the server.
func TestContextUnreachableServer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, stderr, code := gnsContext(t, "--repo", "o/r", "--issue", "1", "--server", "http://"+addr)
	if code != exitcode.CannotRun || !strings.Contains(stderr, "could not reach the server http://"+addr) {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestContextAgreesWithTheAction runs the action on a real issue and then
// `context` on the same issue: the guard's figure in the load's footer is
// the action's context-tokens output, while the load itself leaves the
// guard's status comment out and compresses the agent results.
func TestContextAgreesWithTheAction(t *testing.T) {
	t.Parallel()
	r := actiontest.NewRepo(t)
	labels := []string{"cascade::depth-2", "size::medium"}
	post := func(n int64, body string) {
		r.API(t, r.S.AdminToken, http.MethodPost, r.Path("/issues/%d/comments", n), map[string]string{"body": body}, nil)
	}
	for _, tt := range []struct {
		name      string
		remaining int
		wantFail  bool
	}{
		// A clean pass: the action writes nothing.
		{name: "clean", remaining: 13800},
		// next-over-budget: the action posts its status comment, which is
		// then among the last 3 comments the guard counts.
		{name: "status comment", remaining: 5000, wantFail: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, d := r.Open(t, tt.name, func(n int64) string {
				return checkpointFor(n, strings.Join(labels, ", "), tt.remaining, 3500)
			}, labels...)
			post(n, "Starting on the limiter.")
			post(n, agentResult(1, "lead-developer"))
			post(n, "Please keep Retry-After in seconds.")
			post(n, agentResult(2, "code-reviewer"))

			step := r.Step()
			res := step.RunInProcess(t, d, actiontest.InProcess{})
			if tt.wantFail {
				// Once to post the status comment, once more to measure
				// with it among the last comments (it is edited in place).
				if res.Code != 1 {
					t.Fatalf("first run: %s", res)
				}
				res = step.RunInProcess(t, d, actiontest.InProcess{})
				if res.Code != 1 {
					t.Fatalf("second run: %s", res)
				}
			} else {
				// The first run posts the status comment with the ledger;
				// the second is a clean pass that writes nothing.
				if res.Code != 0 || res.Outputs["result"] != "pass" {
					t.Fatalf("first run: %s", res)
				}
				res = step.RunInProcess(t, d, actiontest.InProcess{})
				if res.Code != 0 || res.Outputs["result"] != "pass" || len(res.Writes) != 0 {
					t.Fatalf("expected a clean pass with no writes: %s", res)
				}
			}
			want, err := strconv.ParseInt(res.Outputs["context-tokens"], 10, 64)
			if err != nil {
				t.Fatalf("context-tokens %q: %v", res.Outputs["context-tokens"], err)
			}
			cpTokens, _ := strconv.Atoi(res.Outputs["checkpoint-tokens"])

			stdout, stderr, code := gnsContext(t, "--repo", r.Owner+"/"+r.Name, "--issue", strconv.FormatInt(n, 10),
				"--server", r.S.URL, "--token", r.S.AdminToken, "--guard-user", r.Bot, "--format", "json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			c := decodeContext(t, stdout)
			t.Logf("action context-tokens %d (checkpoint %d); context: guard figure %d, load %d tokens of %d",
				want, cpTokens, c.Guard.ContextTokens, c.Tokens, c.Cap)
			if c.Guard.ContextTokens != want || c.Guard.CheckpointTokens != cpTokens {
				t.Errorf("guard figure %d (checkpoint %d), the action's context-tokens %d (checkpoint-tokens %d)",
					c.Guard.ContextTokens, c.Guard.CheckpointTokens, want, cpTokens)
			}
			if !strings.Contains(c.Text, fmt.Sprintf("Guard's context-tokens: %s = ", commas(want))) {
				t.Errorf("the footer does not state the guard's figure %d:\n%s", want, c.Text)
			}
			status := r.GuardComments(t, n, actiontest.StatusMarker(n))
			// Every governed issue has the guard's status comment (it holds
			// the ledger): it is left out of the load.
			if len(status) != 1 || len(c.Skipped) != 1 || c.Skipped[0].ID != status[0].ID || c.Skipped[0].What != "status" {
				t.Errorf("the status comment %v was not left out: %+v", status, c.Skipped)
			}
			if strings.Contains(c.Text, "gns-guard:status") {
				t.Errorf("the status comment is in the load:\n%s", c.Text)
			}
			// The last 3 non-guard comments, the newest result as P1.
			var got []string
			for _, s := range c.Sections {
				got = append(got, fmt.Sprintf("P%d:%s:%s", s.Priority, s.Kind, s.Status))
			}
			if strings.Join(got, " ") != "P0:checkpoint:kept P1:result:kept P2:result:kept P2:comment:kept" {
				t.Errorf("sections %v", got)
			}
		})
	}
}

func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// context on an issue the guard does not govern (no checkpoint, no
// governance label, no status comment) is a usage error, exit 2: a wrong
// --issue that recovery cannot mend. A governed issue whose checkpoint
// is gone stays exit 1 (recover), also with its labels removed, since
// the guard's status comment remains.
func TestContextOnAnUngovernedIssue(t *testing.T) {
	t.Parallel()
	f := newFlow(t, 20000, "cascade::depth-2", "size::medium")
	plain, _ := f.r.Open(t, "a question", func(int64) string { return "How do I run the tests?\n" })
	ctxArgs := func(n int64) []string {
		return []string{"--repo", f.r.Owner + "/" + f.r.Name, "--issue", strconv.FormatInt(n, 10), "--server", f.r.S.URL, "--token", f.agent.Token}
	}
	_, stderr, code := gnsContext(t, ctxArgs(plain)...)
	if code != 2 || !strings.Contains(stderr, fmt.Sprintf("context: issue #%d is not governed by gns-guard", plain)) || strings.Contains(stderr, "for usage") {
		t.Errorf("an ungoverned issue: exit %d, %s; want 2, saying it is not governed", code, stderr)
	}

	f.r.EditBody(t, f.n, f.agent, "# Rate limits\n\nThe checkpoint is gone.\n")
	f.r.RemoveLabel(t, f.n, "cascade::depth-2")
	f.r.RemoveLabel(t, f.n, "size::medium")
	if _, stderr, code := gnsContext(t, ctxArgs(f.n)...); code != 1 || !strings.Contains(stderr, "has no checkpoint block") {
		t.Errorf("a governed issue stripped of its checkpoint and labels: exit %d, %s; want 1 (recover)", code, stderr)
	}
}
