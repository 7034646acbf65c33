package action_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/action"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
)

// The in-process tests run action mode on the in-memory Gitea
// (internal/testkit/fakeforge) with the environment a runner gives the
// step: no server, no process, a run in milliseconds. main_test.go says
// which tests of this package start the real Gitea, and why.

// Who acts on the fake repository org/proj: the guard runs with the
// Actions token; org, its owner, opens the issues and holds admin-token;
// agent writes.
const (
	actionsToken = "the-actions-token-of-this-job"
	ownerToken   = "the-owner-token-for-admin-token"
	owner        = "org"
	agent        = "agent"
)

// fakeRepo is org/proj on the fake Gitea, with the clock of its runs.
type fakeRepo struct {
	S     *fakeforge.Server
	clock time.Time
	dir   string
	runs  int
	// payload, when set, is the next runs' event payload as given (a
	// malformed one, say).
	payload []byte
}

// newFakeRepo starts a parallel test on a repository of its own.
func newFakeRepo(t *testing.T) *fakeRepo {
	t.Helper()
	t.Parallel()
	return serialFakeRepo(t)
}

// serialFakeRepo is newFakeRepo for a test that must not run beside
// others (it counts what the process does).
func serialFakeRepo(t *testing.T) *fakeRepo {
	t.Helper()
	r := &fakeRepo{S: fakeforge.New(owner + "/proj"), clock: time.Date(2026, 5, 16, 14, 0, 0, 0, time.UTC), dir: t.TempDir()}
	r.S.Now = r.now
	r.S.Token(actionsToken, issues.ActionsUser)
	r.S.Token(ownerToken, owner)
	r.S.Grant(agent, "write")
	return r
}

func (r *fakeRepo) now() time.Time { return r.clock }

// tick moves the clock on.
func (r *fakeRepo) tick(d time.Duration) { r.clock = r.clock.Add(d) }

// open opens an issue as the owner with body(n) and labels, and returns
// its number.
func (r *fakeRepo) open(body func(int64) string, labels ...string) int64 {
	is := issues.Issue{Title: "a task"}
	for _, l := range labels {
		is.Labels = append(is.Labels, issues.Label{Name: l})
	}
	n := r.S.AddIssue(is, owner)
	r.S.Change(n, func(is *issues.Issue) { is.Body = body(n) })
	return n
}

// editBody is as's edit of issue n's body to body(current).
func (r *fakeRepo) editBody(t *testing.T, n int64, as string, body func(string) string) {
	t.Helper()
	c := r.S.As(as)
	is, err := c.Issue(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.EditBody(context.Background(), n, body(is.Body), is.ContentVersion); err != nil {
		t.Fatal(err)
	}
}

// event is what triggered a run: a workflow event on an issue.
type event struct {
	name, action string
	number       int64
	sender       string
}

func opened(n int64) event            { return event{"issues", "opened", n, owner} }
func edited(n int64, by string) event { return event{"issues", "edited", n, by} }

// fakeRun is what one run left behind.
type fakeRun struct {
	code    int
	outputs map[string]string
	stdout  string
	summary string
	// requests is the API request count the run logged (-1: none).
	requests int
	// writes are the server's writes during the run, in order.
	writes []fakeforge.Write
}

func (f fakeRun) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\noutputs: %v\nwrites: %v", f.code, f.stdout, f.outputs, f.writes)
}

// expect checks the exit code and the result output.
func (f fakeRun) expect(t *testing.T, code int, result string) {
	t.Helper()
	if f.code != code || f.outputs["result"] != result {
		t.Fatalf("want exit %d and result %q\n%s", code, result, f)
	}
}

// rules are the rules of the violations output, in order.
func (f fakeRun) rules(t *testing.T) []string {
	t.Helper()
	var vs []actiontest.Violation
	if err := json.Unmarshal([]byte(f.outputs["violations"]), &vs); err != nil {
		t.Fatalf("violations %q: %v", f.outputs["violations"], err)
	}
	var out []string
	for _, v := range vs {
		out = append(out, v.Rule)
	}
	return out
}

var loggedRequests = regexp.MustCompile(`, (\d+) API request\(s\)`)

// run runs action mode on ev with the inputs (name, value pairs) over
// action.yml's defaults.
func (r *fakeRepo) run(t *testing.T, ev event, inputs ...string) fakeRun {
	t.Helper()
	return r.runWith(t, ev, nil, inputs...)
}

// runWith is run with environment variables set over the runner's.
func (r *fakeRepo) runWith(t *testing.T, ev event, env map[string]string, inputs ...string) fakeRun {
	t.Helper()
	r.runs++
	vars := r.environ(t, ev, inputs)
	for k, v := range env {
		vars[k] = v
	}
	payload, err := json.Marshal(map[string]any{"action": ev.action, "number": ev.number,
		"issue": map[string]any{"number": ev.number}, "sender": map[string]any{"login": ev.sender}})
	if err != nil {
		t.Fatal(err)
	}
	if r.payload != nil {
		payload = r.payload
	}
	before := len(r.S.Writes())
	var stdout, stderr bytes.Buffer
	err = action.Run(context.Background(), action.Options{
		Getenv: func(k string) string { return vars[k] },
		Stdout: &stdout,
		Stderr: &stderr,
		ReadFile: func(name string) ([]byte, error) {
			if name == vars["GITHUB_EVENT_PATH"] {
				return payload, nil
			}
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		},
		AppendFile: func(string, []byte) error { return nil },
		NewForge: func(apiURL, token, o, name string) (port.Forge, error) {
			if apiURL != fakeforge.URL+"/api/v1" || o+"/"+name != r.S.Repo() {
				return nil, fmt.Errorf("no repository %s/%s at %s", o, name, apiURL)
			}
			return r.S.Dial(token), nil
		},
		Now: r.now,
	})
	res := fakeRun{code: exitcode.Code(err), stdout: stdout.String() + stderr.String(), requests: -1, writes: r.S.Writes()[before:]}
	if m := loggedRequests.FindStringSubmatch(res.stdout); m != nil {
		res.requests, _ = strconv.Atoi(m[1])
	}
	out, _ := os.ReadFile(vars["GITHUB_OUTPUT"])
	if res.outputs, err = actiontest.ParseOutputs(string(out)); err != nil {
		t.Fatal(err)
	}
	summary, _ := os.ReadFile(vars["GITHUB_STEP_SUMMARY"])
	res.summary = string(summary)
	return res
}

// environ is the step's environment as the runner gives it: action.yml's
// inputs (the token input the Actions token), the event, and what
// action.yml hands over from the repository variables when the job is
// picked up (the anchor, the grant list, the label pins).
func (r *fakeRepo) environ(t *testing.T, ev event, inputs []string) map[string]string {
	t.Helper()
	dir := filepath.Join(r.dir, strconv.Itoa(r.runs))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{
		"GITHUB_ACTIONS": "true", "GITEA_ACTIONS": "true", "CI": "true",
		"GITHUB_SERVER_URL": fakeforge.URL, "GITHUB_API_URL": fakeforge.URL + "/api/v1",
		"GITHUB_REPOSITORY": r.S.Repo(), "GITHUB_EVENT_NAME": ev.name, "GITHUB_EVENT_PATH": filepath.Join(dir, "event.json"),
		"GITHUB_SHA": "c0ffee0000000000000000000000000000000000", "GITHUB_RUN_ATTEMPT": "1",
		"GITHUB_OUTPUT": filepath.Join(dir, "output"), "GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary"),
		"GITHUB_WORKSPACE": dir, "RUNNER_TEMP": dir,
		action.ActionsTokenEnv: actionsToken,
	}
	ins, err := actiontest.Inputs()
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range ins {
		v := in.Default
		if v == "${{ github.token }}" {
			v = actionsToken
		}
		vars[actiontest.InputEnv(in.Name)] = v
	}
	for i := 0; i+1 < len(inputs); i += 2 {
		if _, ok := vars[actiontest.InputEnv(inputs[i])]; !ok {
			t.Fatalf("input %q is not declared in action.yml", inputs[i])
		}
		vars[actiontest.InputEnv(inputs[i])] = inputs[i+1]
	}
	held := r.S.Variables()
	vars[action.AnchorEnv] = fmt.Sprintf("%d:%s", ev.number, held[ledger.AnchorName(ev.number)])
	vars[action.GrantsEnv] = "grants:" + held[ledger.GrantsName]
	vars[action.PinsEnv] = "labels:" + held[ledger.PinsName]
	return vars
}

// indexOf is the index of the first write that f holds, or -1.
func indexOf(ws []fakeforge.Write, f func(fakeforge.Write) bool) int {
	for i, w := range ws {
		if f(w) {
			return i
		}
	}
	return -1
}

// lastIndexOf is the index of the last write that f holds, or -1.
func lastIndexOf(ws []fakeforge.Write, f func(fakeforge.Write) bool) int {
	for i := len(ws) - 1; i >= 0; i-- {
		if f(ws[i]) {
			return i
		}
	}
	return -1
}

// holds is a write whose method is method and whose text holds s.
func holds(method, s string) func(fakeforge.Write) bool {
	return func(w fakeforge.Write) bool { return w.Method == method && strings.Contains(w.Text, s) }
}
