package cli_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
)

// A guard switched off cannot go unnoticed: a write collaborator (with
// Actions write, as write collaborators have) disables the guard's
// workflow and raises the budget, and no guard run judges it. Within
// unjudged-grace context still loads (the guard's run on an edit takes
// seconds); past it context and report refuse (exit 1), saying what
// changed and to ask an owner, and status lists the issue and the
// disabled workflow (exit 1).
func TestUnjudgedChangeIsRefused(t *testing.T) {
	t.Parallel()
	f := newFlow(t, 20000, "cascade::depth-2", "size::medium")
	r := f.r
	root, err := testkit.Root()
	if err != nil {
		t.Fatal(err)
	}
	wf, err := os.ReadFile(filepath.Join(root, "examples", "workflows", "gns-guard.yml"))
	if err != nil {
		t.Fatal(err)
	}
	r.API(t, r.S.AdminToken, http.MethodPost, r.Path("/contents/.gitea/workflows/gns-guard.yml"),
		map[string]string{"content": base64.StdEncoding.EncodeToString(wf), "message": "the guard's workflow"}, nil)
	if err := actiontest.API(t.Context(), r.S, f.agent.Token, http.MethodPut, r.Path("/actions/workflows/gns-guard.yml/disable"), nil, nil); err != nil {
		t.Fatalf("a write collaborator disabling the guard's workflow: %v", err)
	}
	body := f.body(t)
	raised := strings.Replace(strings.Replace(body, "total: 20000", "total: 90000", 1), "remaining: 20000", "remaining: 90000", 1)
	if raised == body {
		t.Fatal("the budget is not in the body")
	}
	r.EditBody(t, f.n, f.agent, raised) // no guard run judges it

	repo, issue := r.Owner+"/"+r.Name, strconv.FormatInt(f.n, 10)
	conn := []string{"--server", r.S.URL, "--token", f.agent.Token, "--guard-user", r.Bot}
	ctxArgs := append([]string{"context", "--repo", repo, "--issue", issue, "--overflow-log", ""}, conn...)
	if out, errOut, code := gns(t, nil, ctxArgs...); code != 0 {
		t.Fatalf("within the default grace of 2m, context must load: exit %d\n%s\n%s", code, out, errOut)
	}

	time.Sleep(3 * time.Second) // past a grace of 1s on the server's clock
	grace := []string{"--unjudged-grace", "1s"}
	expectRefusal := func(verb, errOut string, code int) {
		t.Helper()
		for _, want := range []string{verb + ": issue #" + issue + ": the guard has not judged its body", "content version", "disabled", "ask an owner"} {
			if code != 1 || !strings.Contains(errOut, want) {
				t.Errorf("%s on an unjudged body: exit %d, want 1 saying %q:\n%s", verb, code, want, errOut)
			}
		}
	}
	_, errOut, code := gns(t, nil, append(ctxArgs, grace...)...)
	expectRefusal("context", errOut, code)
	_, errOut, code = f.report(t, append([]string{"--agent", "lead-developer", "--invocation", "inv-1", "--consumed", "500",
		"--action", "worked on the limiter", "--verdict", "done", "--next-agent", "code-reviewer", "--next-estimate", "2000"}, grace...)...)
	expectRefusal("report", errOut, code)
	if got := f.body(t); got != raised {
		t.Errorf("report wrote to an unjudged body:\n%s", got)
	}

	stArgs := append(append([]string{"status", "--repo", repo}, conn...), grace...)
	out, errOut, code := gns(t, nil, append(stArgs, "--format", "json")...)
	var rows []struct {
		Number   int64 `json:"number"`
		Unjudged *struct {
			Judged  int `json:"ledger_content_version"`
			Current int `json:"content_version"`
		} `json:"unjudged"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || code != 1 {
		t.Fatalf("status --format json: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	if len(rows) != 1 || rows[0].Unjudged == nil || rows[0].Unjudged.Current <= rows[0].Unjudged.Judged {
		t.Errorf("status must list the issue as unjudged:\n%s", out)
	}
	out, errOut, code = gns(t, nil, stArgs...)
	if code != 1 || !strings.Contains(out, "the guard's workflow .gitea/workflows/gns-guard.yml is disabled") || !strings.Contains(out, "unjudged: body v") {
		t.Errorf("status must name the disabled guard workflow and the unjudged issue: exit %d\n%s\n%s", code, out, errOut)
	}
}

// raiseTo edits the flow's issue as its agent: total and remaining to n.
func raiseTo(t *testing.T, f *flow, n int) {
	t.Helper()
	body := f.body(t)
	raised := regexpBudget.ReplaceAllString(body, "total: "+strconv.Itoa(n)+"\n${1}consumed: 0\n${1}remaining: "+strconv.Itoa(n))
	if raised == body {
		t.Fatalf("no budget to raise in:\n%s", body)
	}
	f.r.API(t, f.agent.Token, http.MethodPatch, f.r.Path("/issues/%d", f.n), map[string]string{"body": raised}, nil)
}

var regexpBudget = regexp.MustCompile(`total: \d+\n(\s+)consumed: \d+\n\s+remaining: \d+`)

// Attacks on liveness, the guard not running: the agent raises the
// budget and (a) deletes the guard's status comment, (b) keeps talking on
// the issue so that its last activity stays fresh, (c) raises it on an
// issue whose approval is pending. context refuses each once the grace
// has passed since the raise.
func TestLivenessCannotBeSwitchedOff(t *testing.T) {
	cases := map[string]func(t *testing.T, f *flow){
		"status comment deleted": func(t *testing.T, f *flow) {
			raiseTo(t, f, 900000)
			f.r.DeleteComment(t, f.r.Status(t, f.n).ID, f.agent)
			time.Sleep(3 * time.Second)
		},
		"kept talking": func(t *testing.T, f *flow) {
			raiseTo(t, f, 900000)
			for i := range 8 {
				time.Sleep(500 * time.Millisecond)
				f.r.API(t, f.agent.Token, http.MethodPost, f.r.Path("/issues/%d/comments", f.n), map[string]string{"body": "still working " + strconv.Itoa(i)}, nil)
			}
		},
		"approval pending": func(t *testing.T, f *flow) {
			raiseTo(t, f, 60000)
			for _, res := range f.guard(t) {
				if res.Code != 1 {
					t.Fatalf("the raise passed the guard: %s", res)
				}
			}
			raiseTo(t, f, 900000)
			time.Sleep(3 * time.Second)
		},
	}
	for name, attack := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFlow(t, 20000, "cascade::depth-2", "size::medium")
			attack(t, f)
			_, errOut, code := gns(t, nil, "context", "--repo", f.r.Owner+"/"+f.r.Name, "--issue", strconv.FormatInt(f.n, 10), "--overflow-log", "",
				"--server", f.r.S.URL, "--token", f.agent.Token, "--guard-user", f.r.Bot, "--unjudged-grace", "2s")
			if code != 1 || !strings.Contains(errOut, "do not build on this state") {
				t.Errorf("context built on the raise: exit %d\n%s", code, errOut)
			}
		})
	}
}
