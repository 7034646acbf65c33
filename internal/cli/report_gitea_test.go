package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/cli"
	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// gns runs a gns-guard verb in this process, outside Actions.
func gns(t testing.TB, vars map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := cli.System()
	env.Stdout, env.Stderr = &out, &errb
	env.Getenv = func(k string) string { return vars[k] }
	env.AppendFile = func(string, []byte) error { return nil }
	// The binary wires the meter; a verb that reached it here is wrong.
	env.Meter = func(context.Context, cli.MeterStart) error { return errors.New("no meter is served in process") }
	code = cli.Main(context.Background(), args, env)
	return out.String(), errb.String(), code
}

// flow is one issue on the real server, an agent user who reports on it,
// and the guard (the fixture's bot) run on every event it causes.
type flow struct {
	r     *actiontest.Repo
	agent actiontest.User
	n     int64
}

func newFlow(t testing.TB, total int, labels ...string) *flow {
	t.Helper()
	r := actiontest.NewRepo(t)
	f := &flow{r: r, agent: r.User(t, "agent", giteatest.PermWrite)}
	n, d := r.Open(t, "rate limits", func(n int64) string { return issueWithBudget(n, total, strings.Join(labels, ", ")) }, labels...)
	f.n = n
	if res := r.Step().RunInProcess(t, d, actiontest.InProcess{}); res.Code != 0 {
		t.Fatalf("the guard's first run: %s", res)
	}
	return f
}

func issueWithBudget(n int64, total int, labels string) string {
	return fmt.Sprintf("# Rate limits\n\nKeep this line.\n\n```yaml\ncheckpoint:\n  version: 2\n  issue: %d\n  phase: implementation\n  depth: 1\n  last_agent: orchestrator\n  last_invocation: inv-0\n  budget:\n    total: %d\n    consumed: 0\n    remaining: %d\n  state:\n    labels: [%s]\n    assignee: orchestrator\n  history_tail:\n    - {agent: orchestrator, action: split the task, timestamp: \"2026-05-16T12:58:00Z\"}\n  current_task: wire the limiter into the gateway config\n  next_agent: lead-developer\n  next_estimated_tokens: 2000\n  created_at: \"2026-05-16T12:50:00Z\"\n```\n\nAnd this one.\n",
		n, total, total, labels)
}

// report runs `gns-guard report` as the agent.
func (f *flow) report(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	base := []string{"report", "--repo", f.r.Owner + "/" + f.r.Name, "--issue", strconv.FormatInt(f.n, 10),
		"--server", f.r.S.URL, "--token", f.agent.Token, "--guard-user", f.r.Bot}
	return gns(t, nil, append(base, args...)...)
}

// guard runs the guard on every run the agent's writes recorded, in order,
// and returns their results (runs the guard's own writes recorded are
// taken and dropped: the guard skips its own user's events).
func (f *flow) guard(t testing.TB, inputs ...string) []actiontest.Result {
	t.Helper()
	var out []actiontest.Result
	for _, d := range f.r.Runs.Pending(t) {
		id := d.Run
		d = f.r.Runs.Next(t, func(x actiontest.Delivery) bool { return x.Run == id })
		if d.Sender == f.r.Bot {
			continue
		}
		out = append(out, f.r.Step(inputs...).RunInProcess(t, d, actiontest.InProcess{}))
	}
	return out
}

func (f *flow) body(t *testing.T) string { return f.r.Issue(t, f.n).Body }

// reportJSON is the part of `report --format json` the tests read.
type reportJSON struct {
	Outcome   string `json:"outcome"`
	CommentID int64  `json:"comment_id"`
	Posted    bool   `json:"comment_posted"`
	Patched   bool   `json:"body_patched"`
	Attempts  int    `json:"attempts"`
	After     struct {
		Total, Consumed, Remaining int64
	} `json:"budget_after"`
	Findings []struct {
		Rule string `json:"rule"`
	} `json:"findings"`
}

func decodeReport(t *testing.T, stdout string) reportJSON {
	t.Helper()
	var r reportJSON
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	return r
}

// TestReportWorkflow drives a 20-step agent workflow with nothing but
// `report`, as a write collaborator: after every step the guard runs on
// every Actions run the step recorded (comment, body edit,
// labels), pruning the overflowing tail into its own archives, and
// passes. The history stays whole: archives plus the tail.
func TestReportWorkflow(t *testing.T) {
	t.Parallel()
	start := time.Now()
	f := newFlow(t, 40000, "cascade::depth-2", "size::medium")
	agents := []string{"lead-developer", "code-reviewer"}
	var consumed int64
	runs := 0
	for i := 1; i <= 20; i++ {
		agent, next := agents[i%2], agents[(i+1)%2]
		args := []string{"--agent", agent, "--invocation", fmt.Sprintf("inv-%d", i), "--consumed", strconv.Itoa(500 + i*10),
			"--action", fmt.Sprintf("step %d: worked on the limiter", i), "--verdict", "done", "--files-changed", "2",
			"--key-stats", fmt.Sprintf(`{"tests": %d}`, 10+i), "--next-agent", next, "--next-estimate", "2000", "--format", "json"}
		if i%5 == 0 {
			args = append(args, "--labels-add", fmt.Sprintf("round::%d", i/5), "--assignee", f.agent.Login)
		}
		if i%5 == 1 && i > 5 {
			args = append(args, "--labels-remove", fmt.Sprintf("round::%d", i/5))
		}
		stdout, stderr, code := f.report(t, args...)
		if code != 0 {
			t.Fatalf("step %d: exit %d\n%s\n%s", i, code, stdout, stderr)
		}
		rep := decodeReport(t, stdout)
		consumed += int64(500 + i*10)
		if rep.Outcome != "written" || !rep.Posted || !rep.Patched || rep.After.Consumed != consumed {
			t.Fatalf("step %d: %s", i, stdout)
		}
		results := f.guard(t)
		if len(results) < 2 {
			t.Fatalf("step %d: %d runs recorded, want the comment's and the edit's at least", i, len(results))
		}
		for _, res := range results {
			runs++
			if res.Code != 0 || len(res.Rules(t)) != 0 {
				t.Fatalf("step %d: the guard failed the run:\n%s", i, res)
			}
		}
	}
	body := f.body(t)
	if !strings.Contains(body, fmt.Sprintf("consumed: %d\n", consumed)) || !strings.Contains(body, fmt.Sprintf("remaining: %d\n", 40000-consumed)) ||
		!strings.HasPrefix(body, "# Rate limits\n\nKeep this line.\n\n```yaml\n") || !strings.HasSuffix(body, "```\n\nAnd this one.\n") {
		t.Errorf("final body:\n%s", body)
	}
	// The whole history: the first entry and all 20 reports, from the
	// guard's archives (it pruned each overflowing tail) and the tail.
	stdout, stderr, code := gns(t, nil, "history", "--repo", f.r.Owner+"/"+f.r.Name, "--issue", strconv.FormatInt(f.n, 10),
		"--server", f.r.S.URL, "--token", f.r.Token, "--format", "json")
	if code != 0 {
		t.Fatalf("history: exit %d: %s", code, stderr)
	}
	var hist []struct {
		Invocation string `json:"invocation"`
	}
	if err := json.Unmarshal([]byte(stdout), &hist); err != nil {
		t.Fatal(err)
	}
	if len(hist) != 21 || hist[1].Invocation != "inv-1" || hist[20].Invocation != "inv-20" {
		t.Errorf("history %s", stdout)
	}
	var results int
	for _, c := range f.r.Comments(t, f.n) {
		if strings.HasPrefix(c.Body, "## 🔄 ") && c.User.Login == f.agent.Login {
			results++
		}
	}
	if results != 20 {
		t.Errorf("%d result comments, want 20", results)
	}
	t.Logf("20 reports; the guard ran on all %d runs they recorded and passed each: %s", runs, time.Since(start).Round(time.Millisecond))
}

// TestReportRefusesPerRule: a report the guard would fail writes nothing
// and exits 1, rule by rule; --force writes it and the guard fails the run.
func TestReportRefusesPerRule(t *testing.T) {
	t.Parallel()
	f := newFlow(t, 10000, "cascade::depth-1", "size::medium")
	for _, tt := range []struct {
		name string
		args []string
		rule string
	}{
		{"budget exhausted", []string{"--consumed", "10000"}, guard.RuleBudgetExhausted},
		{"next over half the remaining", []string{"--consumed", "4000", "--next-agent", "code-reviewer", "--next-estimate", "3500"}, guard.RuleNextOverBudget},
		{"depth over the cascade limit", []string{"--depth", "2"}, guard.RuleDepthExceeded},
		{"agent not allowed", []string{"--allowed-agents", "orchestrator,lead-developer", "--next-agent", "intruder", "--next-estimate", "100"}, guard.RuleAgentNotAllowed},
		// The accepted size stays the limit: removing its label is tampering.
		{"accepted size removed", []string{"--next-agent", "code-reviewer", "--next-estimate", "20000", "--labels-remove", "size::medium"}, guard.RuleTampered},
		{"relaxing label", []string{"--labels-add", "cascade::depth-n", "--labels-remove", "cascade::depth-1"}, guard.RuleTampered},
	} {
		t.Run(tt.name, func(t *testing.T) { f.expectRefused(t, tt.name, tt.rule, tt.args...) })
	}
	// task-too-large: on an issue no size label was ever accepted on, an
	// estimate over the largest size.
	t.Run("task too large", func(t *testing.T) {
		unsized := newFlow(t, 100000, "cascade::depth-1")
		unsized.expectRefused(t, "task too large", guard.RuleTaskTooLarge, "--next-agent", "code-reviewer", "--next-estimate", "20000")
	})
	// --force writes, and the guard fails the run the edit causes.
	stdout, stderr, code := f.report(t, "--agent", "lead-developer", "--invocation", "inv-forced", "--consumed", "10000", "--action", "spent it all", "--force")
	if code != 0 || !strings.Contains(stdout, "--force: written") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	failed := false
	for _, res := range f.guard(t) {
		failed = failed || (res.Code == 1 && strings.Contains(strings.Join(res.Rules(t), ","), guard.RuleBudgetExhausted))
	}
	if !failed {
		t.Error("the guard did not fail the forced report's run")
	}
}

// expectRefused runs a report with args (as the named step) and asserts
// that it is refused for rule, exit 1, and writes nothing: no body, label
// or comment.
func (f *flow) expectRefused(t *testing.T, name, rule string, args ...string) {
	t.Helper()
	before := f.r.Issue(t, f.n)
	comments := len(f.r.Comments(t, f.n))
	args = append([]string{"--agent", "lead-developer", "--invocation", "inv-" + strings.ReplaceAll(name, " ", "-"),
		"--consumed", "100", "--action", "tried", "--format", "json"}, args...)
	stdout, stderr, code := f.report(t, args...)
	rep := decodeReport(t, stdout)
	found := false
	for _, fd := range rep.Findings {
		found = found || fd.Rule == rule
	}
	if code != 1 || rep.Outcome != "refused" || !found || !strings.Contains(stderr, "["+rule+"]") {
		t.Fatalf("exit %d, want 1 with %s:\n%s\n%s", code, rule, stdout, stderr)
	}
	if is := f.r.Issue(t, f.n); is.Body != before.Body || is.ContentVersion != before.ContentVersion || strings.Join(is.LabelNames(), ",") != strings.Join(before.LabelNames(), ",") {
		t.Errorf("a refused report wrote the body or labels")
	}
	if n := len(f.r.Comments(t, f.n)); n != comments {
		t.Errorf("a refused report posted a comment (%d → %d)", comments, n)
	}
}

// faultForge wraps the real client: before hands EditBody to the server,
// it runs hook (which may fail the call, or edit the body concurrently).
type faultForge struct {
	cli.ExitForge
	hook func(calls int64) error
	n    atomic.Int64
}

func (f *faultForge) EditBody(ctx context.Context, number int64, body string, version int) (int, error) {
	if err := f.hook(f.n.Add(1)); err != nil {
		return 0, err
	}
	return f.ExitForge.EditBody(ctx, number, body, version)
}

// withFault makes `report` and `recover` talk through a faultForge until
// the returned function (also run at the test's end) puts the real client
// back.
func withFault(t *testing.T, hook func(calls int64) error) (restore func()) {
	t.Helper()
	restore = cli.SetExitForge(func(server, token, owner, repo string) (cli.ExitForge, error) {
		c, err := forge.New(server, token, owner, repo)
		if err != nil {
			return nil, err
		}
		return &faultForge{ExitForge: c, hook: hook}, nil
	})
	t.Cleanup(restore)
	return restore
}

// TestReportCrashRerun: a report that stops between its comment and its
// patch is completed by the re-run (the patch only); a third run writes
// nothing. The guard passes every run.
func TestReportCrashRerun(t *testing.T) {
	f := newFlow(t, 20000, "cascade::depth-2", "size::medium")
	args := []string{"--agent", "lead-developer", "--invocation", "inv-crash", "--consumed", "1500", "--action", "implemented the bucket",
		"--next-agent", "code-reviewer", "--next-estimate", "2000", "--labels-add", "phase::review", "--format", "json"}
	func() {
		defer withFault(t, func(int64) error { return errors.New("killed between the comment and the patch") })()
		_, stderr, code := f.report(t, args...)
		if code != 3 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}()
	if strings.Contains(f.body(t), "consumed: 1500") {
		t.Fatal("the failed patch was written")
	}
	stdout, stderr, code := f.report(t, args...)
	rep := decodeReport(t, stdout)
	if code != 0 || rep.Outcome != "written" || rep.Posted || !rep.Patched || rep.After.Consumed != 1500 {
		t.Fatalf("re-run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, _, code = f.report(t, args...)
	if rep := decodeReport(t, stdout); code != 0 || rep.Outcome != "already-reported" {
		t.Fatalf("third run: exit %d\n%s", code, stdout)
	}
	var own int
	for _, c := range f.r.Comments(t, f.n) {
		if strings.Contains(c.Body, `"invocation":"inv-crash"`) {
			own++
		}
	}
	is := f.r.Issue(t, f.n)
	if own != 1 || !strings.Contains(is.Body, "consumed: 1500\n") || strings.Count(is.Body, "inv-crash") != 2 || !is.Has("phase::review") {
		t.Errorf("%d comments; body:\n%s", own, is.Body)
	}
	for _, res := range f.guard(t) {
		if res.Code != 0 {
			t.Fatalf("the guard failed: %s", res)
		}
	}
}

// TestReportConcurrentEdit: another agent edits the body while the report
// is written; the compare-and-swap patch meets HTTP 409, reads again and
// applies the same report: both edits are in the body.
func TestReportConcurrentEdit(t *testing.T) {
	f := newFlow(t, 20000, "cascade::depth-2", "size::medium")
	other := f.r.User(t, "other", giteatest.PermWrite)
	withFault(t, func(calls int64) error {
		if calls == 1 {
			body := strings.Replace(f.body(t), "consumed: 0\n    remaining: 20000", "consumed: 700\n    remaining: 19300", 1)
			body = strings.Replace(body, "And this one.", "And this one, edited meanwhile.", 1)
			f.r.API(t, other.Token, http.MethodPatch, f.r.Path("/issues/%d", f.n), map[string]string{"body": body}, nil)
		}
		return nil
	})
	stdout, stderr, code := f.report(t, "--agent", "lead-developer", "--invocation", "inv-c", "--consumed", "1000", "--action", "did it",
		"--next-agent", "code-reviewer", "--next-estimate", "2000", "--format", "json")
	rep := decodeReport(t, stdout)
	if code != 0 || rep.Attempts != 2 || rep.After.Consumed != 1700 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	body := f.body(t)
	if !strings.Contains(body, "consumed: 1700\n    remaining: 18300") || !strings.Contains(body, "edited meanwhile") {
		t.Errorf("an edit was lost:\n%s", body)
	}
	// The comment states the figures the body got.
	for _, c := range f.r.Comments(t, f.n) {
		if strings.Contains(c.Body, `"invocation":"inv-c"`) && !strings.Contains(c.Body, `"budget":{"before":19300,"consumed":1000,"remaining":18300}`) {
			t.Errorf("the comment's figures:\n%s", c.Body)
		}
	}
	for _, res := range f.guard(t) {
		if res.Code != 0 {
			t.Fatalf("the guard failed: %s", res)
		}
	}
}

// TestRecoverBrokenBody: an agent breaks the body after a result whose
// patch never landed; the guard asks for recovery and names the command;
// `recover` rebuilds the checkpoint from the guard's ledger plus that
// footer, `check` accepts it, only an approver may apply it, and the guard
// passes the applied body.
func TestRecoverBrokenBody(t *testing.T) {
	f := newFlow(t, 20000, "cascade::depth-2", "size::medium")
	repo := f.r.Owner + "/" + f.r.Name
	for i := 1; i <= 3; i++ {
		if _, stderr, code := f.report(t, "--agent", "lead-developer", "--invocation", fmt.Sprintf("inv-%d", i), "--consumed", "1000",
			"--action", fmt.Sprintf("step %d", i), "--next-agent", "lead-developer", "--next-estimate", "2000"); code != 0 {
			t.Fatalf("step %d: %s", i, stderr)
		}
		f.guard(t)
	}
	func() { // a fourth result whose patch never landed
		defer withFault(t, func(int64) error { return errors.New("crashed") })()
		f.report(t, "--agent", "code-reviewer", "--invocation", "inv-4", "--consumed", "600", "--action", "reviewed",
			"--next-agent", "lead-developer", "--next-estimate", "1500")
	}()
	broken := strings.Replace(f.body(t), "    remaining: 17000\n", "    remaining: lots\n", 1)
	d := f.r.EditBody(t, f.n, f.agent, broken)
	res := f.r.Step().RunInProcess(t, d, actiontest.InProcess{})
	if res.Code != 1 || !strings.Contains(strings.Join(res.Rules(t), ","), "checkpoint-invalid") {
		t.Fatalf("the guard on the broken body: %s", res)
	}
	rec := f.r.GuardComments(t, f.n, actiontest.RecoveryMarker(f.n))
	if len(rec) != 1 || !strings.Contains(rec[0].Body, fmt.Sprintf("gns-guard recover --repo %s --issue %d", repo, f.n)) {
		t.Fatalf("the recovery comment does not name the command: %v", rec)
	}
	f.guard(t)

	args := []string{"recover", "--repo", repo, "--issue", strconv.FormatInt(f.n, 10), "--server", f.r.S.URL, "--guard-user", f.r.Bot}
	stdout, stderr, code := gns(t, nil, append(args, "--token", f.agent.Token, "--format", "json")...)
	if code != 0 {
		t.Fatalf("recover: exit %d\n%s", code, stderr)
	}
	var got struct {
		Problem  string `json:"problem"`
		Body     string `json:"body"`
		Proposal struct {
			YAML  string  `json:"yaml"`
			Since []int64 `json:"since"`
		} `json:"proposal"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	// The ledger holds 3000 consumed; the footer since adds 600.
	if got.Problem != "invalid" || len(got.Proposal.Since) != 1 || !strings.Contains(got.Proposal.YAML, "consumed: 3600\n    remaining: 16400\n") ||
		!strings.Contains(got.Proposal.YAML, "last_invocation: inv-4\n") || !strings.Contains(got.Proposal.YAML, "next_agent: lead-developer\n  next_estimated_tokens: 1500\n") {
		t.Errorf("proposal:\n%s", stdout)
	}
	checkBody(t, got.Body, f.n)
	text, _, _ := gns(t, nil, append(args, "--token", f.agent.Token)...)
	if !strings.Contains(text, "| budget.consumed | 3600 |") || !strings.Contains(text, "--apply") {
		t.Errorf("text output:\n%s", text)
	}

	// Only an approver applies it.
	if _, stderr, code := gns(t, nil, append(args, "--token", f.agent.Token, "--apply")...); code != 2 || !strings.Contains(stderr, "not a repository admin") {
		t.Errorf("the agent applied it: exit %d %s", code, stderr)
	}
	if _, stderr, code := gns(t, nil, append(args, "--token", f.r.S.AdminToken, "--apply")...); code != 0 {
		t.Fatalf("the admin's apply: exit %d %s", code, stderr)
	}
	if f.body(t) != got.Body {
		t.Errorf("applied body differs from the proposal's")
	}
	for _, res := range f.guard(t) {
		if res.Code != 0 {
			t.Fatalf("the guard on the recovered body: %s", res)
		}
	}
}

// checkBody runs `gns-guard check` on a body: it must pass.
func checkBody(t *testing.T, body string, n int64) {
	t.Helper()
	var out, errb bytes.Buffer
	env := cli.System()
	env.Stdout, env.Stderr, env.Stdin = &out, &errb, strings.NewReader(body)
	env.Getenv = func(string) string { return "" }
	if code := cli.Main(context.Background(), []string{"check", "--issue", strconv.FormatInt(n, 10), "-"}, env); code != 0 {
		t.Errorf("check: exit %d\n%s%s\n%s", code, out.String(), errb.String(), body)
	}
}

// A repository configured only through .gitea/gns-guard.yml: report reads
// the same file the guard reads (no flag names a setting, and no flag
// names the guard's user: its signed ledger does), refuses what the guard
// would fail, and what it accepts the guard passes.
func TestReportJudgesWithTheRepositoryConfiguration(t *testing.T) {
	t.Parallel()
	r := actiontest.NewRepo(t)
	r.CommitFile(t, ".gitea/gns-guard.yml", "allowed-agents:\n  - orchestrator\n  - lead-developer\n")
	f := &flow{r: r, agent: r.User(t, "agent", giteatest.PermWrite)}
	n, d := r.Open(t, "configured", func(n int64) string { return issueWithBudget(n, 20000, "cascade::depth-2, size::medium") }, "cascade::depth-2", "size::medium")
	f.n = n
	if res := r.Step().RunInProcess(t, d, actiontest.InProcess{}); res.Code != 0 {
		t.Fatalf("the guard's first run: %s", res)
	}
	for _, res := range f.guard(t) { // the runs opening the issue recorded
		if res.Code != 0 {
			t.Fatalf("the guard on the new issue: %s", res)
		}
	}
	report := func(args ...string) (string, string, int) {
		base := []string{"report", "--repo", r.Owner + "/" + r.Name, "--issue", strconv.FormatInt(n, 10),
			"--server", r.S.URL, "--token", f.agent.Token, "--format", "json", "--agent", "lead-developer", "--consumed", "1000", "--action", "implemented it"}
		return gns(t, nil, append(base, args...)...)
	}

	out, errOut, code := report("--invocation", "inv-1", "--next-agent", "code-reviewer", "--next-estimate", "1000")
	rep := decodeReport(t, out)
	if code != 1 || rep.Outcome != "refused" || len(rep.Findings) == 0 || rep.Findings[0].Rule != guard.RuleAgentNotAllowed {
		t.Fatalf("a next agent the file does not allow: exit %d, %+v\n%s", code, rep, errOut)
	}
	if res := f.guard(t); len(res) != 0 {
		t.Fatalf("a refused report caused %d runs", len(res))
	}

	// Forced, the guard fails it for the same rule.
	out, _, code = report("--invocation", "inv-1", "--next-agent", "code-reviewer", "--next-estimate", "1000", "--force")
	if rep := decodeReport(t, out); code != 0 || rep.Outcome != "written" {
		t.Fatalf("forced: exit %d, %+v", code, rep)
	}
	failed := false
	for _, res := range f.guard(t) {
		failed = failed || slices.Contains(res.Rules(t), guard.RuleAgentNotAllowed)
	}
	if !failed {
		t.Errorf("the guard did not fail the forced report for %s", guard.RuleAgentNotAllowed)
	}
}
