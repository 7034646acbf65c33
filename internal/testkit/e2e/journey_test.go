package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/scopes"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
	"github.com/gns-guard/gns-guard/internal/testkit/mcpclient"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// journeyBudget bounds the journey's waiting for the runner's runs and
// for the job that lends its token (the runner's job timeout is 10
// minutes).
const journeyBudget = 9 * time.Minute

// journeySteps is the number of agent steps of the journey.
const journeySteps = 40

// runnerSteps are the first agent steps, judged by the real runner.
const runnerSteps = 4

// roles are the five agents, in the order they hand over.
var roles = []string{"orchestrator", "architect", "lead-developer", "code-reviewer", "tester"}

// TestJourney is a team's whole first workflow under the guard, with the
// shipped tools only, in the recommended posture: a private repository of
// an organisation (newOrgRepo), every token made with exactly the scopes
// of internal/scopes, the agents' account in init's agents team. The
// owner adopts the guard with `gns-guard init --runner host` (ledger key
// from `gns-guard keygen`, the owner's token as admin-token, the binary
// pinned by its SHA-256) and merges its pull request; a person opens an
// issue from the template, filling in the task and nothing else; then
// five agents take 40 steps,
// each with `gns-guard context` and `gns-guard report` (the first with
// examples/agent/agent.sh), writing result texts of a few hundred words.
// On the way: the task grows from size::small to size::medium (the owner's
// relabelling), an agent hides consumption by editing the checkpoint by
// hand (caught; the owner restores it with `gns-guard recover --apply` and
// approves), the budget runs low and is pruned into a new phase, and an
// agent's step exhausts the budget (reported with --force, as the
// protocol says; the owner raises the budget and removes
// budget::exhausted); the owner appends a sentence to the task, which
// the guard accepts from the edit's own run. Each step's work is a call
// of the official openai SDK through the meter in front of a stand-in
// provider; the tester reports through `gns-guard mcp` with the official
// MCP client. The day ends with `gns-guard status`.
//
// The adoption and the first steps run through the real runner. Then, so
// that the journey costs no runner job per event, the guard's workflow is
// replaced by actiontest's capture workflow and the guard runs in process
// on every Actions payload the server records, with the token of the
// Actions user, lent by a job the runner keeps running: the guard writes
// as gitea-actions throughout, and its writes start no runs, as in
// production.
//
// It asserts that no honest step fails a guard run, that every entry load
// `context` printed is under its cap by the tokenizer, carries the previous
// agent's result whole (or says it compressed it to fit) and is the load
// the guard's context figure measured, that the meter counted on the
// issue what the stand-in charged, that every report hands
// current_task, state.assignee and agent_chain to the next agent, and that
// `gns-guard history` rebuilds every entry the agents reported, in order. It prints
// the tokens each agent loaded against the whole issue's tokens, the guard
// runs, failures and prunes, and the wall time of each step.
func TestJourney(t *testing.T) {
	t.Parallel()
	start := time.Now()
	j := newJourney(t)
	j.key = j.adoptHost("--agents", j.agentsFlag())
	if cfg := j.r.rawFile("main", ".gitea/gns-guard.yml"); !strings.Contains(cfg, "\nagents:\n  architect: ["+j.agent.Login+"]\n") {
		t.Fatalf("init --agents did not map the agents in the settings file:\n%s", cfg)
	}
	j.agentsTeam()
	j.logf("adopted: init, keygen, secrets, pull request #1 merged in %s", time.Since(start).Round(time.Millisecond))
	j.openFromTemplate()

	for k := 1; k <= journeySteps; k++ {
		if k == runnerSteps+1 {
			j.handOver()
		}
		j.beforeStep(k)
		j.step(k)
	}

	j.checkHistory()
	j.logf("the meter: %s", j.meteredNote())
	j.status()
	j.summary(time.Since(start))
}

// adoptHost adopts the guard on the host-mode runner as
// docs/operations.md says: `init --runner host` with the owner's init
// token proposes the host workflow with the binary that ran it pinned by
// its SHA-256; keygen, the secrets (the owner's admin token), the pull
// request merged. The runner's host has a copy of that binary installed;
// the workflow's GNS_GUARD_BIN names its path instead of finding it on
// the PATH, the only change. It returns the ledger key.
func (j *journey) adoptHost(initArgs ...string) (key string) {
	t, r := j.t, j.r
	t.Helper()
	out := r.gns(append([]string{"init", "--repo", j.repoName(), "--server", r.srv.URL, "--token", r.initTokenOr(), "--runner", "host"}, initArgs...)...)
	for _, want := range []string{
		fmt.Sprintf("Pull request #1, opened: %s/%s/%s/pulls/1\n", r.srv.URL, r.owner, r.name),
		"Set the Actions secret GNS_GUARD_LEDGER_KEY", "Set the Actions secret GNS_GUARD_ADMIN_TOKEN",
		"Install gns-guard on the runner's host", "add " + j.agent.Login + " to the team gns-agents: done",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("init's output lacks %q:\n%s", want, out)
		}
	}
	key = strings.TrimSuffix(r.gns("keygen"), "\n")
	r.setSecret("GNS_GUARD_LEDGER_KEY", key)
	r.setSecret("GNS_GUARD_ADMIN_TOKEN", r.ownerToken())
	r.mergePull(1)
	const wfPath = ".gitea/workflows/gns-guard.yml"
	shipped, err := os.ReadFile(repoRoot + "/" + hostWorkflowPath)
	if err != nil {
		t.Fatal(err)
	}
	digest := fileSHA256(t, r.bin)
	written := replaceOnce(t, string(shipped), `GNS_GUARD_SHA256: "`+strings.Repeat("0", 64)+`"`, `GNS_GUARD_SHA256: "`+digest+`"`)
	if got := r.rawFile("main", wfPath); got != written {
		t.Fatalf("init --runner host wrote another workflow than the shipped one with its binary's digest %s pinned:\n%s", digest, got)
	}
	installed := filepath.Join(j.dir, "host", "gns-guard")
	copyFile(t, r.bin, installed)
	r.replaceFile(wfPath, []byte(replaceOnce(t, written, "GNS_GUARD_BIN: gns-guard\n", "GNS_GUARD_BIN: "+installed+"\n")))
	return key
}

// agentsFlag is init's --agents: every role spoken as by the agents'
// account.
func (j *journey) agentsFlag() string {
	items := make([]string, len(roles))
	for i, role := range roles {
		items[i] = role + "=" + j.agent.Login
	}
	return strings.Join(items, ",")
}

// journey is the state of TestJourney.
type journey struct {
	t     *testing.T
	r     *repo
	n     int64
	key   string // the ledger key
	agent actiontest.User
	// ownerLogin is the organisation's owner, the approver.
	ownerLogin   string
	recoverToken string // the owner's token for recover --apply
	counter      *tokens.Counter
	prose        *prose
	dir          string

	// act is the capture fixture once the runner handed over (nil
	// before), and actionsToken the Actions token lent to the guard.
	act          *actiontest.Repo
	actionsToken string
	release      string // the file whose creation ends the lending job

	// meter is the meter the agents spend through, from step 2 on.
	meter *journeyMeter

	size      string     // the task size: small, then medium
	task      string     // what the owner added to the task, once added
	reported  []reported // what the agents reported, in order
	rows      []stepRow
	runs      int // guard runs, the runner's and the in-process ones
	failed    int // guard runs that failed (each one expected)
	prunes    int // guard runs that pruned
	phases    int // prunes that started a new phase budget
	cur       *stepRow
	seenRuns  int   // the runner's runs of the issue already judged
	lastTotal int64 // budget.total after the last step

	// lastResult is the result text the last agent reported, and
	// guardContext the context-tokens output of the guard's last run in
	// process (0: none yet, or it failed).
	lastResult   string
	guardContext int64
	whole, after int // entry loads that carried the previous result whole, of those after a result
}

// reported is a history entry as an agent reported it.
type reported struct{ Agent, Action, Invocation string }

// stepRow is what the journey prints for one step.
type stepRow struct {
	k                 int
	agent             string
	loaded, capTokens int
	issueTokens       int
	runs, failed      int
	wall              time.Duration
	note              string
	comments          int
}

func newJourney(t *testing.T) *journey {
	s := giteatest.Require(t)
	dir := t.TempDir()
	bin := buildGuard(t, dir)
	o := newOrgRepo(t, s)
	runner := s.RepoRunner(t, o.org, o.name)
	r := &repo{t: t, srv: s, runner: runner, owner: o.org, name: o.name, bin: bin, deadline: time.Now().Add(journeyBudget),
		token: o.adminToken, initToken: o.initToken}
	counter, err := tokens.New(tokens.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	return &journey{t: t, r: r, agent: o.agent, ownerLogin: o.owner, recoverToken: o.recoverToken, counter: counter,
		prose: newProse(2026), dir: dir, size: "small"}
}

// orgRepo is a private repository of an organisation whose owner is no
// site administrator, with the tokens a person creates as
// internal/scopes says: the owner's for init (scopes.Init), the guard's
// admin-token (scopes.Admin, also the owner's token for what the owner
// does) and recover --apply (the verbs' table), the agents' account's
// (scopes.Agent). The agents' account has no role in the repository
// until init puts it in the agents' team.
type orgRepo struct {
	org, name, owner      string
	initToken, adminToken string
	recoverToken          string // the verbs' table's scopes of recover --apply
	agent                 actiontest.User
}

func newOrgRepo(t *testing.T, s *giteatest.Server) orgRepo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	seq := time.Now().UnixNano() % 1e9
	o := orgRepo{org: fmt.Sprintf("journeyorg%d", seq), owner: fmt.Sprintf("journeyowner%d", seq)}
	toks, err := s.NewUserScoped(ctx, o.owner, scopes.Init.Names(), scopes.Admin.Names(), scopes.WithFlag("recover"))
	if err != nil {
		t.Fatal(err)
	}
	o.initToken, o.adminToken, o.recoverToken = toks[0], toks[1], toks[2]
	agent := fmt.Sprintf("journeyagent%d", seq)
	toks, err = s.NewUserScoped(ctx, agent, scopes.Agent.Names())
	if err != nil {
		t.Fatal(err)
	}
	o.agent = actiontest.User{Login: agent, Token: toks[0]}
	_, o.name = s.NewRepo(t) // a unique name; the organisation holds its namesake
	// The site administrator makes the organisation for its owner, and
	// its private repository, as a person does in the web interface.
	for _, c := range []struct {
		path string
		in   map[string]any
	}{
		{"/admin/users/" + o.owner + "/orgs", map[string]any{"username": o.org, "visibility": "private"}},
		{"/orgs/" + o.org + "/repos", map[string]any{"name": o.name, "private": true, "auto_init": true, "default_branch": "main", "readme": "Default"}},
	} {
		if err := s.API(ctx, s.AdminToken, http.MethodPost, c.path, c.in, nil); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// agentsTeam checks that init put the agents' account in its team, with
// Issues write and Code read on the repository, and that it has no other
// role there.
func (j *journey) agentsTeam() {
	t, r := j.t, j.r
	type team struct {
		ID    int64             `json:"id"`
		Name  string            `json:"name"`
		Units map[string]string `json:"units_map"`
	}
	var teams []team
	r.must(http.MethodGet, "/orgs/"+r.owner+"/teams", nil, &teams)
	i := slices.IndexFunc(teams, func(x team) bool { return x.Name == "gns-agents" })
	if i < 0 {
		t.Fatalf("init made no team gns-agents in %s: %+v", r.owner, teams)
	}
	if u := teams[i].Units; u["repo.issues"] != "write" || u["repo.code"] != "read" {
		t.Errorf("the team gns-agents has units %v, want Issues write and Code read", u)
	}
	r.must(http.MethodGet, fmt.Sprintf("/teams/%d/members/%s", teams[i].ID, j.agent.Login), nil, nil)
	var collabs []struct {
		Login string `json:"login"`
	}
	r.must(http.MethodGet, r.path("/collaborators"), nil, &collabs)
	if len(collabs) != 0 {
		t.Errorf("the repository has collaborators %+v, want none: the agents are in the team", collabs)
	}
}

func (j *journey) logf(format string, args ...any) {
	j.t.Helper()
	j.t.Logf(format, args...)
}

// journeyTask is the issue's task as the person who opens it writes it.
const journeyTask = "Rate-limit the public API per API key: a token bucket per key, " +
	"`429 Too Many Requests` with `Retry-After` when it is empty, limits set per route in the gateway's " +
	"configuration. Done when the gateway's integration tests show a client held to its limit and the " +
	"limits are documented in docs/limits.md.\n"

// taskAddition is the sentence the approver appends to the task mid-way.
const taskAddition = " The admin routes stay unlimited: say so in docs/limits.md."

// openFromTemplate opens the issue as a person does: init's template with
// the task filled in and nothing else. The guard's first run sets the
// checkpoint's issue number.
func (j *journey) openFromTemplate() {
	t, r := j.t, j.r
	tmpl, labels := r.template()
	const task = "What to build or change, and how anyone can tell it is done.\n"
	body := replaceOnce(t, tmpl.Content, task, journeyTask)
	j.n = 2 // init's pull request took #1
	r.openIssue(j.n, "Rate limits for the public API", body, labels...)
	runs := r.waitRuns(j.n, 2)
	wantOpened(t, runs, "success")
	j.countRunnerRuns(runs, "opened")
	if got := r.issue(j.n).Body; !strings.Contains(got, fmt.Sprintf("  issue: %d\n", j.n)) {
		t.Fatalf("the guard's first run did not set the checkpoint's issue number:\n%s", got)
	}
}

// beforeStep does what people do between the agents' steps.
func (j *journey) beforeStep(k int) {
	switch k {
	case 11: // the task is bigger than it looked: the owner relabels it
		j.resize("small", "medium")
	case 16: // an agent hides consumption; the owner restores and approves
		j.misbehave()
	case 21: // the owner, an approver, adds a sentence to the task
		j.editTask()
	}
}

// step is agent step k: context, the work, report; and the guard's runs
// on everything the report wrote.
func (j *journey) step(k int) {
	t := j.t
	begin := time.Now()
	agent := roles[(k-1)%len(roles)]
	next := roles[k%len(roles)]
	if k == journeySteps {
		next = "" // the workflow is done
	}
	j.cur = &stepRow{k: k, agent: agent, capTokens: availableTokens[j.size]}
	entry := j.context(agent)
	inv := fmt.Sprintf("%s-%02d", agent, k)
	if k == 1 {
		j.agentScript(agent, next, inv)
	} else {
		j.report(k, agent, next, inv, entry)
	}
	j.cur.wall = time.Since(begin)
	j.cur.issueTokens, j.cur.comments = j.issueTokens()
	j.rows = append(j.rows, *j.cur)
	row := j.cur
	t.Logf("step %2d %-14s loaded %5d of %5d tokens; the whole issue %6d tokens (%3d comments); %d guard run(s), %d failed; %s%s",
		k, agent, row.loaded, row.capTokens, row.issueTokens, row.comments, row.runs, row.failed, row.wall.Round(time.Millisecond), row.note)
}

// availableTokens is what an agent may load on entry, by task size
// (docs/contract.md §3: max context minus checkpoint overhead).
var availableTokens = map[string]int{"tiny": 3500, "small": 5200, "medium": 8800, "large": 18500}

// entryLoad is what `context` gave an agent.
type entryLoad struct {
	tokens    int
	room      int64 // the pressure room the guard leaves the next call now
	phaseEnds int64 // the consumption from which the guard's prune ends the phase
	carryover float64
	grant     int64
	remaining int64 // budget.remaining
}

// context runs `gns-guard context` as the agent and checks that what it
// printed is under the task size's cap, counted with the tokenizer; then
// `context --format json` for the room the guard leaves the next call, as
// agent.sh does.
func (j *journey) context(agent string) entryLoad {
	t := j.t
	out, stderr, code := j.gns(j.agent.Token, nil, "context", "--repo", j.repoName(), "--issue", strconv.FormatInt(j.n, 10))
	if code != 0 {
		t.Fatalf("%s: gns-guard context exit %d\n%s%s", agent, code, out, stderr)
	}
	got := j.counter.Count(out)
	if got > availableTokens[j.size] {
		t.Errorf("%s: context printed %d tokens, over the %d a %s task allows:\n%s", agent, got, availableTokens[j.size], j.size, out)
	}
	j.previousResult(agent, out)
	if j.task != "" && !strings.Contains(out, j.task) {
		t.Errorf("%s: context does not load the task as the owner edited it (%q):\n%s", agent, j.task, out)
	}
	js, stderr, code := j.gns(j.agent.Token, nil, "context", "--repo", j.repoName(), "--issue", strconv.FormatInt(j.n, 10), "--format", "json")
	if code != 0 {
		t.Fatalf("%s: gns-guard context --format json exit %d\n%s%s", agent, code, js, stderr)
	}
	var rep struct {
		Dropped []string `json:"dropped"`
		Guard   struct {
			EntryTokens int   `json:"entry_tokens"`
			Next        int64 `json:"next_estimated_tokens"`
		} `json:"guard"`
		Next struct {
			BudgetRemaining int64   `json:"budget_remaining"`
			PressureRoom    int64   `json:"pressure_room"`
			PhaseEndsAt     int64   `json:"phase_ends_at"`
			CarryoverRatio  float64 `json:"carryover_ratio"`
			PhaseGrant      int64   `json:"phase_grant"`
		} `json:"next_estimate"`
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatalf("context --format json: %v\n%s", err, js)
	}
	j.cur.loaded = got
	// The guard's context-pressure figure is what context loads: the
	// load (no file, no skill, nothing dropped) and the next estimate.
	if len(rep.Dropped) == 0 && (rep.Guard.EntryTokens != got || j.guardContext != 0 && j.guardContext != int64(got)+rep.Guard.Next) {
		t.Errorf("%s: context loaded %d tokens; the guard's figure in it is %d, the guard's last run measured %d = entry + next_estimated_tokens %d",
			agent, got, rep.Guard.EntryTokens, j.guardContext, rep.Guard.Next)
	}
	return entryLoad{tokens: got, room: rep.Next.PressureRoom, remaining: rep.Next.BudgetRemaining,
		phaseEnds: rep.Next.PhaseEndsAt, carryover: rep.Next.CarryoverRatio, grant: rep.Next.PhaseGrant}
}

// previousResult checks that the entry load carries the previous agent's
// result text whole: the reviewer's findings reach the developer as
// written, unless the load says it compressed the result to fit the cap.
func (j *journey) previousResult(agent, out string) {
	t := j.t
	if j.lastResult == "" {
		return
	}
	whole := strings.TrimRight(j.lastResult, "\n")
	j.after++
	switch {
	case strings.Contains(out, whole):
		j.whole++
	case strings.Contains(out, "(compressed to fit the cap)") && strings.Contains(out, "loads it whole; its link has it)"):
		j.cur.note += "; the previous result was compressed to fit the cap"
	default:
		t.Errorf("%s: the entry load carries neither the previous result whole nor says it compressed it:\n%s", agent, out)
	}
}

// budgetAfter is agent.sh's rule for the next call's budget: what is left
// after this call's consumption, or the new phase's budget when this call
// ends the phase.
func (e entryLoad) budgetAfter(consumed int64) int64 {
	left := e.remaining - consumed
	if consumed >= e.phaseEnds && left > 0 {
		left = int64(float64(left)*e.carryover) + e.grant
	}
	return left
}

// agentScript is step 1: examples/agent/agent.sh, unchanged, with the
// binary on PATH.
func (j *journey) agentScript(agent, next, inv string) {
	t := j.t
	script, err := filepath.Abs(filepath.Join(repoRoot, "examples", "agent", "agent.sh"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", script)
	cmd.Env = []string{"PATH=" + filepath.Dir(j.r.bin) + ":/usr/bin:/bin", "HOME=" + work,
		"GITHUB_SERVER_URL=" + j.r.srv.URL, "GITEA_TOKEN=" + j.agent.Token, "REPO=" + j.repoName(),
		"ISSUE=" + strconv.FormatInt(j.n, 10), "AGENT=" + agent, "NEXT_AGENT=" + next, "INVOCATION=" + inv, "WORKDIR=" + work}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("agent.sh: %v\n%s", err, out)
	}
	j.reported = append(j.reported, reported{agent, "implemented the rate limiter middleware, with tests", inv})
	j.guard("pass")
}

// report is an agent's exit: a result text of a few hundred words, its
// consumption (the entry it loaded, the result it wrote, its own work), and
// the next call's estimate taken as agent.sh takes it. A report refused
// for an exhausted budget is made again with --force, as the protocol
// says; the guard fails that run, and the owner raises the budget and
// approves.
func (j *journey) report(k int, agent, next, inv string, entry entryLoad) {
	t := j.t
	result := j.prose.result(agent, k)
	file := filepath.Join(j.dir, fmt.Sprintf("result-%02d.md", k))
	if err := os.WriteFile(file, []byte(result), 0o600); err != nil {
		t.Fatal(err)
	}
	work := j.prose.work()
	j.spend(k, inv, work)
	consumed := int64(entry.tokens + j.counter.Count(result) + work)
	action := j.prose.action(agent, k)
	args := []string{"report", "--repo", j.repoName(), "--issue", strconv.FormatInt(j.n, 10),
		"--agent", agent, "--invocation", inv, "--consumed", strconv.FormatInt(consumed, 10),
		"--action", action, "--result-file", file, "--verdict", verdicts[agent], "--files-changed", strconv.Itoa(k % 5),
		"--key-stats", fmt.Sprintf(`{"step": %d}`, k), "--phase", phaseOf(k), "--meter-url", j.meter.URL, "--format", "json"}
	task := fmt.Sprintf("%s takes up step %d", next, k+1)
	if next != "" {
		est := max(min(entry.room/2, entry.budgetAfter(consumed)/2), 0)
		args = append(args, "--next-agent", next, "--next-estimate", strconv.FormatInt(est, 10), "--current-task", task)
	}
	out, stderr, code := j.reportAs(agent, args)
	rep := decodeReportOut(t, out, stderr)
	if code == 1 && slices.Contains(rep.rules(), "budget-exhausted") {
		j.cur.note += fmt.Sprintf("; report refused: %d tokens exhaust the %d left", consumed, entry.remaining)
		out, stderr, code = j.reportAs(agent, append(args, "--force"))
		rep = decodeReportOut(t, out, stderr)
		if code != 0 || rep.Outcome != "written" {
			t.Fatalf("step %d: report --force exit %d\n%s%s", k, code, out, stderr)
		}
		j.reported = append(j.reported, reported{agent, action, inv})
		j.lastResult = result
		j.guard("budget-exhausted")
		j.approveBudget()
		return
	}
	if code != 0 || rep.Outcome != "written" {
		t.Fatalf("step %d (%s): report exit %d: an honest report was refused\n%s%s", k, agent, code, out, stderr)
	}
	if j.meter.spent && !strings.Contains(out, "its signed receipt is in the footer") {
		t.Errorf("step %d: the report carries no receipt of the meter\n%s", k, out)
	}
	j.reported = append(j.reported, reported{agent, action, inv})
	j.lastResult = result
	j.guard("pass")
	if next != "" {
		j.handedTo(next, task)
	}
}

// mcpAgent is the agent that reports through `gns-guard mcp`, driven by
// the official MCP client (mcpclient); the others run `gns-guard report`.
const mcpAgent = "tester"

// mcpInts are report's flags whose tool arguments are integers.
var mcpInts = map[string]bool{"issue": true, "consumed": true, "next-estimate": true, "files-changed": true}

// reportAs runs report's command line args as agent does: mcpAgent calls
// the MCP server's report tool with the same flags as arguments, the
// others run the verb. It returns the document, the log and the exit
// code (1 for the tool's error result).
func (j *journey) reportAs(agent string, args []string) (string, string, int) {
	if agent != mcpAgent {
		return j.gns(j.agent.Token, nil, args...)
	}
	t := j.t
	call := map[string]any{}
	for i := 1; i < len(args); i++ {
		name := strings.TrimPrefix(args[i], "--")
		switch {
		case name == "force":
			call["force"] = true
			continue
		case name == "repo" || name == "format": // the server's, and always json
			i++
			continue
		}
		i++
		var v any = args[i]
		if mcpInts[name] {
			n, err := strconv.ParseInt(args[i], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			v = n
		}
		call[strings.ReplaceAll(name, "-", "_")] = v
	}
	tr := mcpclient.Run(t, mcpclient.Plan{
		Command: j.r.bin,
		Args:    []string{"mcp", "--server", j.r.srv.URL, "--repo", j.repoName(), "--root", j.dir},
		Env:     map[string]string{"GITEA_TOKEN": j.agent.Token, "PATH": "/usr/bin:/bin", "HOME": j.dir},
		Calls:   []mcpclient.Call{{Name: "report", Arguments: call}},
	})
	if len(tr.Calls) != 1 || tr.Calls[0].Result == nil || len(tr.TransportErrors) > 0 {
		t.Fatalf("%s: the MCP client's report: %+v\n%s", agent, tr.Calls, tr.Raw)
	}
	if strings.Contains(tr.Raw, j.agent.Token) {
		t.Errorf("%s: the agents' token appears in what the MCP client saw", agent)
	}
	res := tr.Calls[0].Result
	j.cur.note += "; reported through MCP"
	if res.IsError {
		return res.Text(), strings.Join(tr.Stderr, "\n"), 1
	}
	return res.Text(), strings.Join(tr.Stderr, "\n"), 0
}

// handedTo checks that the checkpoint follows the handoff: current_task
// is the one reported, state.assignee and agent_chain name the next agent.
func (j *journey) handedTo(next, task string) {
	body := j.r.issue(j.n).Body
	for _, want := range []string{"  current_task: " + task + "\n", "    assignee: " + next + "\n", "  agent_chain: [" + next + "]\n"} {
		if !strings.Contains(body, want) {
			j.t.Errorf("after the report the checkpoint lacks %q:\n%s", want, body)
		}
	}
}

var verdicts = map[string]string{"orchestrator": "planned", "architect": "designed", "lead-developer": "ready-for-review",
	"code-reviewer": "changes-requested", "tester": "passed"}

// phaseOf is the checkpoint's phase at step k.
func phaseOf(k int) string {
	switch {
	case k <= 5:
		return "design"
	case k <= 30:
		return "implementation"
	default:
		return "release"
	}
}

// reportOut is the part of `report --format json` the journey reads.
type reportOut struct {
	Outcome  string `json:"outcome"`
	Findings []struct {
		Rule string `json:"rule"`
	} `json:"findings"`
}

func (r reportOut) rules() []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Rule)
	}
	return out
}

func decodeReportOut(t *testing.T, stdout, stderr string) reportOut {
	t.Helper()
	var r reportOut
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("report --format json: %v\n%s%s", err, stdout, stderr)
	}
	return r
}

// approveBudget is the owner's answer to budget::exhausted, as
// docs/ledger.md has it: the owner raises the budget by 20,000 in the
// checkpoint, which the guard fails like any raise against its ledger
// (checkpoint-tampered: the editor proves nothing) and flags with
// permission::violation; the owner, having checked the body, removes
// permission::violation, which accepts the raise (the run still fails:
// budget::exhausted is on), then budget::exhausted.
func (j *journey) approveBudget() {
	body := j.r.issue(j.n).Body
	total, consumed := numberIn(j.t, body, "total"), numberIn(j.t, body, "consumed")
	raised := setNumber(j.t, body, "total", total+20000)
	raised = setNumber(j.t, raised, "remaining", total+20000-consumed)
	j.r.editBody(j.n, raised)
	j.guard("checkpoint-tampered")
	j.r.removeLabel(j.n, labelNamed(j.t, j.r.issue(j.n), "permission::violation"))
	j.guard("budget-exhausted")
	j.r.removeLabel(j.n, labelNamed(j.t, j.r.issue(j.n), "budget::exhausted"))
	j.guard("pass")
	if got := numberIn(j.t, j.r.issue(j.n).Body, "total"); got != total+20000 {
		j.t.Fatalf("after the approval budget.total is %d, want the raised %d", got, total+20000)
	}
	j.cur.note += fmt.Sprintf("; the owner raised budget.total to %d and removed permission::violation and budget::exhausted", total+20000)
}

// resize is the owner's relabelling from one size to the next, in one
// change: a larger size added by an approver relaxes the limit.
func (j *journey) resize(from, to string) {
	is := j.r.issue(j.n)
	var all []label
	j.r.must(http.MethodGet, j.r.path("/labels?limit=50"), nil, &all)
	var keep []label
	for _, l := range is.Labels {
		if l.Name != "size::"+from {
			keep = append(keep, l)
		}
	}
	i := slices.IndexFunc(all, func(l label) bool { return l.Name == "size::"+to })
	if i < 0 {
		j.t.Fatalf("the repository has no size::%s", to)
	}
	j.r.replaceLabels(j.n, append(keep, all[i])...)
	j.size = to
	row := &stepRow{note: "the owner relabelled size::" + from + " to size::" + to}
	j.cur = row
	j.guard("pass")
	j.logf("before step %d: %s; %d guard run(s)", len(j.rows)+1, row.note, row.runs)
}

// misbehave: an agent lowers consumed by hand to hide 2,000 tokens. The
// guard fails the run (checkpoint-tampered, permission::violation); the
// owner restores the accepted state with `gns-guard recover --apply` (the
// run on that edit fails too: permission::violation is still on) and then
// removes permission::violation.
func (j *journey) misbehave() {
	t := j.t
	row := &stepRow{}
	j.cur = row
	body := j.r.issue(j.n).Body
	consumed, remaining := numberIn(t, body, "consumed"), numberIn(t, body, "remaining")
	hidden := setNumber(t, body, "consumed", consumed-2000)
	hidden = setNumber(t, hidden, "remaining", remaining+2000)
	j.asAgent(http.MethodPatch, j.r.path("/issues/%d", j.n), map[string]any{"body": hidden})
	j.guard("checkpoint-tampered")
	if !slices.Contains(j.r.issue(j.n).labelNames(), "permission::violation") {
		t.Fatal("the guard caught the tampering but did not set permission::violation")
	}
	out, stderr, code := j.gns(j.recoverToken, []string{"GNS_GUARD_LEDGER_KEY=" + j.key}, "recover", "--repo", j.repoName(),
		"--issue", strconv.FormatInt(j.n, 10), "--ledger-key-env", "GNS_GUARD_LEDGER_KEY", "--apply")
	if code != 0 {
		t.Fatalf("gns-guard recover --apply exit %d\n%s%s", code, out, stderr)
	}
	if got := numberIn(t, j.r.issue(j.n).Body, "consumed"); got != consumed {
		t.Fatalf("recover --apply left consumed at %d, want the accepted %d:\n%s", got, consumed, out)
	}
	j.guard("permission-violation")
	j.r.removeLabel(j.n, labelNamed(t, j.r.issue(j.n), "permission::violation"))
	j.guard("pass")
	row.note = "an agent lowered consumed by hand: caught; the owner ran recover --apply and removed permission::violation"
	j.logf("before step %d: %s; %d guard run(s), %d failed as they must", len(j.rows)+1, row.note, row.runs, row.failed)
}

// editTask is the organisation owner's edit of the issue's ## Task: a
// sentence appended. On a private repository Gitea shows no token the
// body's edit history, so the guard attributes the change from its own
// run's payload: the owner's, an approver's. The run passes, and from
// the next step on the agents load the task as the owner left it.
func (j *journey) editTask() {
	t := j.t
	row := &stepRow{}
	j.cur = row
	body := j.r.issue(j.n).Body
	added := strings.TrimSuffix(journeyTask, "\n") + taskAddition + "\n"
	j.r.editBody(j.n, replaceOnce(t, body, journeyTask, added))
	if j.act == nil {
		t.Fatal("the task is edited after the hand-over")
	}
	for _, d := range j.act.Runs.Pending(t) {
		if d.Sender != j.ownerLogin {
			t.Errorf("the run of the owner's task edit names %q as its sender, want %q", d.Sender, j.ownerLogin)
		}
	}
	j.guard("pass")
	j.task = taskAddition
	row.note = "the owner appended a sentence to the task"
	j.logf("before step %d: %s; %d guard run(s), %d failed", len(j.rows)+1, row.note, row.runs, row.failed)
}

// asAgent sends a request as the agents' account.
func (j *journey) asAgent(method, path string, in any) {
	j.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := j.r.srv.API(ctx, j.agent.Token, method, path, in, nil); err != nil {
		j.t.Fatal(err)
	}
}

// guard runs the guard on everything recorded since the last call and
// checks every run: "pass", or the rule that must fail it. Before the
// hand-over the runner runs it; after, it runs in process on every
// recorded payload.
func (j *journey) guard(want string) {
	t := j.t
	t.Helper()
	if j.act == nil {
		j.waitRunner(want)
		return
	}
	for _, d := range j.act.Runs.Pending(t) {
		id := d.Run
		d = j.act.Runs.Next(t, func(x actiontest.Delivery) bool { return x.Run == id })
		step := j.act.Step("admin-token", j.r.ownerToken(), "ledger-key", j.key)
		step.Env[actionsTokenEnv] = j.actionsToken // as action.yml's runs.env sets it
		res := step.RunInProcess(t, d, actiontest.InProcess{})
		j.runs++
		j.cur.runs++
		j.guardContext, _ = strconv.ParseInt(res.Outputs["context-tokens"], 10, 64)
		if res.Outputs["pruned"] == "true" {
			j.prunes++
		}
		if want == "pass" {
			if res.Code != 0 || res.Outputs["result"] != "pass" {
				t.Fatalf("an honest step failed a guard run (%s):\n%s", d, res)
			}
			continue
		}
		j.failed++
		j.cur.failed++
		if res.Code != 1 || !slices.Contains(res.Rules(t), want) {
			t.Fatalf("the guard failed %s with %v, want %s:\n%s", d, res.Rules(t), want, res)
		}
	}
}

// actionsTokenEnv is the variable action.yml's runs.env sets to
// ${{ github.token }}: the guard knows its token is the Actions token.
const actionsTokenEnv = "GNS_GUARD_ACTIONS_TOKEN"

// waitRunner waits for the runner's runs of everything recorded since the
// last call and checks them as guard does. A run still waiting in the
// issue's concurrency group is cancelled when a newer one joins it: a
// cancelled run judged nothing.
func (j *journey) waitRunner(want string) {
	t := j.t
	t.Helper()
	// Gitea records a run in the request that caused its event; a short
	// quiet period covers a server under load.
	have := len(j.r.issueRuns(j.n))
	for {
		time.Sleep(time.Second)
		now := len(j.r.issueRuns(j.n))
		if now == have && now > j.seenRuns {
			break
		}
		if time.Now().After(j.r.deadline) {
			t.Fatalf("no new run of issue #%d recorded:\n%s", j.n, giteatest.RunList(j.r.issueRuns(j.n)))
		}
		have = now
	}
	runs := j.r.waitRuns(j.n, have)
	fresh := runs[j.seenRuns:]
	j.seenRuns = len(runs)
	for _, run := range fresh {
		if run.Conclusion == "cancelled" {
			continue
		}
		j.runs++
		j.cur.runs++
		log := j.r.jobLog(run)
		if strings.Contains(log, "outputs: result=pass pruned=true ") || strings.Contains(log, "outputs: result=fail pruned=true ") {
			j.prunes++
		}
		if want == "pass" {
			if run.Conclusion != "success" {
				t.Fatalf("an honest step failed a guard run: %s\n%s", run, log)
			}
			continue
		}
		j.failed++
		j.cur.failed++
		if run.Conclusion != "failure" || !strings.Contains(log, "["+want+"]") {
			t.Fatalf("run %s, want a failure for %s:\n%s", run, want, log)
		}
	}
}

// countRunnerRuns counts the runner's runs of the issue's opening.
func (j *journey) countRunnerRuns(runs []giteatest.WorkflowRun, what string) {
	j.seenRuns = len(runs)
	for _, run := range runs {
		if run.Conclusion != "cancelled" {
			j.runs++
		}
	}
	j.logf("%s: issue #%d from the template, the task filled in; %d guard run(s) through the runner", what, j.n, j.runs)
}

// handOver moves the guard from the runner to in-process runs on the
// recorded payloads. A job the runner keeps running writes its Actions
// token to a file and waits; the guard's workflow is deleted and
// actiontest's capture workflow committed, whose runs no runner takes.
// The guard keeps writing as gitea-actions, with the job's token, and
// with the same secrets as before.
func (j *journey) handOver() {
	t, r := j.t, j.r
	begin := time.Now()
	lend := filepath.Join(j.dir, "lend")
	if err := os.Mkdir(lend, 0o700); err != nil {
		t.Fatal(err)
	}
	j.release = filepath.Join(lend, "release")
	shipped, err := os.ReadFile(repoRoot + "/examples/workflows/gns-guard.yml")
	if err != nil {
		t.Fatal(err)
	}
	perms := regexp.MustCompile(`(?m)^permissions:\n(?:  .*\n)+`).Find(shipped)
	if perms == nil {
		t.Fatal("the shipped workflow has no permissions block")
	}
	r.putFile(".gitea/workflows/lend-token.yml", []byte(lendWorkflow(lend, string(perms))))
	r.must(http.MethodPost, r.path("/actions/workflows/lend-token.yml/dispatches"), map[string]any{"ref": "main"}, nil)
	t.Cleanup(func() { j.endLending() })
	for {
		b, err := os.ReadFile(filepath.Join(lend, "token"))
		if err == nil && len(b) > 0 {
			j.actionsToken = string(b)
			break
		}
		if time.Now().After(r.deadline) {
			t.Fatalf("the lending job wrote no token:\n%s\n--- runner output ---\n%s", giteatest.RunList(r.runs()), r.runner.LogTail())
		}
		time.Sleep(200 * time.Millisecond)
	}
	r.deleteFile(".gitea/workflows/gns-guard.yml")
	j.act = &actiontest.Repo{S: r.srv, Owner: r.owner, Name: r.name, Bot: actionsUser, Token: j.actionsToken,
		Runs: actiontest.NewRuns(t, r.srv, r.owner, r.name)}
	j.logf("after step %d: the guard runs in process on the recorded payloads from now on (hand-over %s)", runnerSteps, time.Since(begin).Round(time.Millisecond))
}

// lendWorkflow is a workflow_dispatch job that writes its Actions token
// to dir/token and runs until dir/release exists (or dir is gone, or nine
// minutes have passed: a test killed midway leaves no job behind). Its
// permissions are the shipped workflow's (perms), so that the token is
// the one the guard's runs get.
func lendWorkflow(dir, perms string) string {
	q := shellQuote(dir)
	return `name: lend-token
on: workflow_dispatch
` + perms + `jobs:
  lend:
    runs-on: ubuntu-latest
    steps:
      - env:
          TOKEN: ${{ github.token }}
        run: |
          printf '%s' "$TOKEN" > ` + q + `/token.tmp && mv ` + q + `/token.tmp ` + q + `/token
          i=0
          while [ ! -e ` + q + `/release ] && [ -d ` + q + ` ] && [ $i -lt 2700 ]; do sleep 0.2; i=$((i+1)); done
`
}

// endLending lets the lending job finish and waits for it, so that the
// runner is free for the next test.
func (j *journey) endLending() {
	if err := os.WriteFile(j.release, nil, 0o600); err != nil {
		j.t.Error(err)
		return
	}
	for time.Now().Before(j.r.deadline.Add(time.Minute)) {
		done := true
		for _, run := range j.r.runs() {
			if run.Status != "completed" && strings.HasPrefix(run.Title, "lend-token") {
				done = false
			}
		}
		if done {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	j.t.Error("the lending job did not finish")
}

// deleteFile deletes a file of main.
func (r *repo) deleteFile(path string) {
	r.t.Helper()
	var cur struct {
		SHA string `json:"sha"`
	}
	r.must(http.MethodGet, r.path("/contents/%s?ref=main", path), nil, &cur)
	r.must(http.MethodDelete, r.path("/contents/%s", path), map[string]any{"sha": cur.SHA, "message": "Guard in process from now on", "branch": "main"}, nil)
}

// gns runs the guard's binary with token as GITEA_TOKEN (and env), and
// returns its standard output, standard error and exit code.
func (j *journey) gns(token string, env []string, args ...string) (string, string, int) {
	j.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args = append(args[:1:1], append([]string{"--server", j.r.srv.URL}, args[1:]...)...)
	cmd := exec.CommandContext(ctx, j.r.bin, args...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + j.dir, "GITEA_TOKEN=" + token}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		j.t.Fatalf("gns-guard %s: %v", args[0], err)
	}
	return stdout.String(), stderr.String(), code
}

func (j *journey) repoName() string { return j.r.owner + "/" + j.r.name }

// issueTokens counts the whole issue, as an agent loading all of it would
// pay: the body and every comment, with the tokenizer.
func (j *journey) issueTokens() (tokens, comments int) {
	is := j.r.issue(j.n)
	total := j.counter.Count(is.Body)
	cs := j.r.allComments(j.n)
	for _, c := range cs {
		total += j.counter.Count(c.Body)
	}
	if t := numberIn(j.t, is.Body, "total"); j.lastTotal > 0 && t < j.lastTotal {
		j.phases++
	}
	j.lastTotal = numberIn(j.t, is.Body, "total")
	return total, len(cs)
}

// allComments lists every comment of the issue: Gitea's list of an
// issue's comments is not paged. It checks the count against the issue's.
func (r *repo) allComments(n int64) []comment {
	r.t.Helper()
	var is struct {
		Comments int `json:"comments"`
	}
	r.must(http.MethodGet, r.path("/issues/%d", n), nil, &is)
	cs := r.comments(n)
	if len(cs) != is.Comments {
		r.t.Fatalf("issue #%d lists %d comments and counts %d", n, len(cs), is.Comments)
	}
	return cs
}

// checkHistory rebuilds the history with `gns-guard history` and compares
// it with what the agents reported, entry by entry, in order.
func (j *journey) checkHistory() {
	t := j.t
	out, stderr, code := j.gns(j.r.ownerToken(), []string{"GNS_GUARD_LEDGER_KEY=" + j.key}, "history", "--repo", j.repoName(),
		"--issue", strconv.FormatInt(j.n, 10), "--format", "json", "--ledger-key-env", "GNS_GUARD_LEDGER_KEY")
	if code != 0 {
		t.Fatalf("gns-guard history exit %d\n%s%s", code, out, stderr)
	}
	var got []struct {
		Seq        int    `json:"seq"`
		Agent      string `json:"agent"`
		Action     string `json:"action"`
		Invocation string `json:"invocation"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("gns-guard history --format json: %v\n%s", err, out)
	}
	for i := range max(len(got), len(j.reported)) {
		if i >= len(got) || i >= len(j.reported) {
			t.Fatalf("gns-guard history rebuilt %d entries, the agents reported %d", len(got), len(j.reported))
		}
		g := reported{got[i].Agent, got[i].Action, got[i].Invocation}
		if g != j.reported[i] || got[i].Seq != i+1 {
			t.Fatalf("history entry %d (seq %d) is %+v, the agents reported %+v", i+1, got[i].Seq, g, j.reported[i])
		}
	}
	t.Logf("gns-guard history (every signature checked) rebuilt all %d entries the agents reported, in order", len(got))
}

// status runs `gns-guard status` as the agents' account at the end of
// the day: the issue is listed, and passes.
func (j *journey) status() {
	t := j.t
	out, stderr, code := j.gns(j.agent.Token, nil, "status", "--repo", j.repoName(), "--format", "json")
	if code != 0 {
		t.Fatalf("gns-guard status exit %d\n%s%s", code, out, stderr)
	}
	var rows []struct {
		Number  int64  `json:"number"`
		Verdict string `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("gns-guard status --format json: %v\n%s", err, out)
	}
	if len(rows) != 1 || rows[0].Number != j.n || rows[0].Verdict != "pass" {
		t.Fatalf("gns-guard status lists %+v, want issue #%d passing\n%s", rows, j.n, out)
	}
	t.Logf("gns-guard status: issue #%d passes", j.n)
}

// summary prints the journey's numbers.
func (j *journey) summary(wall time.Duration) {
	var loaded, most, agentWall int
	var slowest time.Duration
	for _, row := range j.rows {
		loaded += row.loaded
		most = max(most, row.loaded)
		agentWall += int(row.wall.Milliseconds())
		slowest = max(slowest, row.wall)
	}
	last := j.rows[len(j.rows)-1]
	steps := len(j.rows)
	j.logf("journey: %d steps by %d agents; entry load %d tokens a step on average (at most %d; the previous result whole in %d of the %d after a result), against %d tokens for the whole issue at the end (body and %d comments); %d guard runs, %d failed (each one expected), %d pruned, %d new phase budgets; %.1f s a step (at most %.1f s); %s in all",
		steps, len(roles), loaded/steps, most, j.whole, j.after, last.issueTokens, last.comments, j.runs, j.failed, j.prunes, j.phases,
		float64(agentWall)/float64(steps)/1000, slowest.Seconds(), wall.Round(time.Second))
}

// numberRE finds a budget number of the checkpoint.
func numberRE(key string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^(    ` + key + `: )(-?\d+)$`)
}

// numberIn reads a budget number (total, consumed, remaining) of the
// checkpoint in body.
func numberIn(t *testing.T, body, key string) int64 {
	t.Helper()
	m := numberRE(key).FindAllStringSubmatch(body, -1)
	if len(m) != 1 {
		t.Fatalf("the body holds budget.%s %d times, want once:\n%s", key, len(m), body)
	}
	v, err := strconv.ParseInt(m[0][2], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// setNumber sets a budget number of the checkpoint in body, as a person
// editing the issue does.
func setNumber(t *testing.T, body, key string, v int64) string {
	t.Helper()
	numberIn(t, body, key)
	return numberRE(key).ReplaceAllString(body, "${1}"+strconv.FormatInt(v, 10))
}
