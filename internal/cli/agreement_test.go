package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/action"
	"github.com/gns-guard/gns-guard/internal/agentwrite"
	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/settings"
)

// The agreement test: the guard (action mode) and the agents' commands
// judge alike. On the same issue state and the same configuration,
//
//	(a) the action's verdict (pass or fail, and its failing rules),
//	(b) `check FILE --config CFG --labels L` (exit code, failing rules),
//	(c) `prune FILE --config CFG --labels L` (whether it prunes), and
//	(d) `report`, which reads the repository's configuration file from the
//	    server as the action does: what it accepts, the action's next run
//	    passes; what it refuses, written with --force, the action's next
//	    run fails,
//	(e) the `check` tool of `gns-guard mcp`, given the body as a file or as
//	    text: the same document as (b), an error result exactly when (b)
//	    exits non-zero
//
// must agree. Every issue body under testdata/check and examples/issues is
// crossed with a few configuration files and label sets.

// The world of the scenarios: one server, one repository, fixed users.
const (
	agreeServerURL   = "http://gitea.test"
	agreeRepo        = "org/proj"
	agreeActionsTok  = "actions-token"
	agreeAgentTok    = "agent-token"
	agreeAgent       = "agent"
	agreeOpener      = "alice"
	agreeSHA         = "4f1d2c3b4a5968778695a4b3c2d1e0f9a8b7c6d5"
	agreeInvocation  = "inv-agreement-1"
	agreeConsumed    = 1500
	agreeEventPath   = "/github/workflow/event.json"
	agreeConfigPath  = "gns-guard.yml"
	agreeBodyPath    = "issue.md"
	agreeDefaultNext = "code-reviewer"
)

// agreeStart is the fixed clock's first reading.
var agreeStart = time.Date(2026, 5, 16, 14, 0, 0, 0, time.UTC)

// knownDisagreement lists scenarios (by name) where an entry point is known
// to judge differently from the action, with the diagnosis: they are
// reported with t.Log instead of failing the test. Empty: every entry point
// agrees on every scenario.
var knownDisagreement = map[string]string{}

// agreeConfigs are the repository configuration files of the scenarios
// (nil: the repository has none).
var agreeConfigs = []struct {
	name string
	text []byte
}{
	{"no-file", nil},
	{"depth2-agents", []byte("# the repository's guard settings\ndefault-max-depth: 2\nallowed-agents: [orchestrator, architect, lead-developer, code-reviewer, tester]\n")},
	{"tail4-prune0.5", []byte("history-tail: 4\nprune-threshold: 0.5\n")},
	{"small-block", []byte("max-checkpoint-bytes: 600\n")},
	{"pressure0.9", []byte("pressure-threshold: \"0.9\"\n")},
}

// agreeLabelSets are the live label sets of the scenarios, from the body.
var agreeLabelSets = []struct {
	name string
	of   func(b agreeBody) []string
}{
	{"state-labels", func(b agreeBody) []string { return b.labels }},
	{"depth-1", func(b agreeBody) []string {
		out := slices.DeleteFunc(slices.Clone(b.labels), func(l string) bool { return strings.HasPrefix(l, "cascade::") })
		return append(out, "cascade::depth-1")
	}},
	{"size-tiny", func(b agreeBody) []string {
		out := slices.DeleteFunc(slices.Clone(b.labels), func(l string) bool { return strings.HasPrefix(l, "size::") })
		return append(out, "size::tiny")
	}},
}

// agreeBody is one issue body and what the scenarios take from it.
type agreeBody struct {
	name   string // its file, relative to the repository
	text   string
	number int64    // checkpoint.issue, else 7
	labels []string // state.labels, as the agents recorded them
	// The report an agent makes on it: the next agent reports, and hands
	// back to the last one with the same estimate.
	agent, next string
	estimate    int64
}

// readAgreeBodies reads every body of the scenarios.
func readAgreeBodies(t *testing.T) []agreeBody {
	t.Helper()
	var paths []string
	for _, g := range []string{"testdata/check/ok/*.md", "testdata/check/err/*.md", "examples/issues/*.md"} {
		m, err := filepath.Glob(filepath.Join("..", "..", g))
		if err != nil || len(m) == 0 {
			t.Fatalf("no bodies match %s: %v", g, err)
		}
		paths = append(paths, m...)
	}
	labelsLine := regexp.MustCompile(`(?m)^\s*labels:\s*\[?([^\]\n]*)\]?\s*$`)
	issueLine := regexp.MustCompile(`(?m)^\s*issue:\s*(\d+)\s*$`)
	var out []agreeBody
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b := agreeBody{name: strings.TrimPrefix(filepath.ToSlash(p), "../../"), text: string(data), number: 7,
			agent: "lead-developer", next: agreeDefaultNext, estimate: 2000}
		r := checkpoint.Parse(b.text, checkpoint.Options{MaxBytes: len(data) + 1})
		if cp := r.Checkpoint; cp != nil {
			if cp.Issue.Set && cp.Issue.Value > 0 {
				b.number = cp.Issue.Value
			}
			for _, l := range cp.State.Labels.Items {
				b.labels = append(b.labels, l.Value)
			}
			if cp.NextAgent.Value != "" {
				b.agent = cp.NextAgent.Value
			}
			if cp.LastAgent.Value != "" {
				b.next = cp.LastAgent.Value
			}
			if cp.NextEstimatedTokens.Set {
				b.estimate = cp.NextEstimatedTokens.Value
			}
		}
		if m := issueLine.FindStringSubmatch(b.text); m != nil && (r.Checkpoint == nil || !r.Checkpoint.Issue.Set) {
			b.number, _ = strconv.ParseInt(m[1], 10, 64)
		}
		if m := labelsLine.FindStringSubmatch(b.text); m != nil && len(b.labels) == 0 {
			// state.labels that do not read as a list: the labels the
			// agents meant.
			b.labels = config.ParseList(m[1])
		}
		out = append(out, b)
	}
	return out
}

// agreeScenario is one issue state and configuration.
type agreeScenario struct {
	body     agreeBody
	config   []byte
	cfgName  string
	labelSet string
	labels   []string
}

func (s agreeScenario) name() string {
	return s.body.name + " | " + s.cfgName + " | " + s.labelSet
}

// agreeVerdict is one entry point's judgement.
type agreeVerdict struct {
	code  int
	rules []string // the failing rules, sorted, each once
	// pruned says the body was (or would be) pruned.
	pruned bool
	// outcome is what `report` did: written, refused, unreadable (an
	// error: nothing written), or the action's result output.
	outcome string
}

func (v agreeVerdict) pass() bool { return v.code == exitcode.Clean }

func (v agreeVerdict) String() string {
	s := "pass"
	if !v.pass() {
		s = fmt.Sprintf("exit %d", v.code)
	}
	if len(v.rules) > 0 {
		s += " [" + strings.Join(v.rules, ",") + "]"
	}
	return s
}

// agreeRow is what every entry point returned on one scenario.
type agreeRow struct {
	sc       agreeScenario
	dry      agreeVerdict // the action, dry run, on the opened issue
	real     agreeVerdict // the action's run on the opened issue
	check    agreeVerdict
	prune    agreeVerdict
	report   agreeVerdict // report, then report --force when refused
	forced   agreeVerdict // zero unless the report was refused
	next     agreeVerdict // the action's run on the state report left
	problems []string
}

func (r *agreeRow) disagree(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// line is the row of the table: the four outcomes.
func (r *agreeRow) line() string {
	rep := r.report.outcome
	if r.forced.outcome != "" {
		rep += " → --force " + r.forced.outcome
	}
	if r.next.outcome != "" {
		rep += " → action " + r.next.String()
	}
	return fmt.Sprintf("%-58s | action %s pruned=%v (run: %s pruned=%v) | check %s | prune pruned=%v | report %s",
		r.sc.name(), r.dry, r.dry.pruned, r.real, r.real.pruned, r.check, r.prune.pruned, rep)
}

// TestAgreement runs every scenario through the action (in process, on a
// fake server, with the environment a Gitea runner gives the step) and
// through check, prune and report, and fails on every scenario where an
// entry point judges differently from the action.
func TestAgreement(t *testing.T) {
	start := time.Now()
	bodies := readAgreeBodies(t)
	var scenarios []agreeScenario
	for _, b := range bodies {
		for _, c := range agreeConfigs {
			for _, ls := range agreeLabelSets {
				scenarios = append(scenarios, agreeScenario{body: b, config: c.text, cfgName: c.name, labelSet: ls.name, labels: ls.of(b)})
			}
		}
	}

	var srv *agreeServer // the scenario's server, which the verbs reach
	old := connectForge
	t.Cleanup(func() { connectForge = old })
	connectForge = func(server, token, owner, repo string) (port.Forge, error) {
		if server != agreeServerURL || owner+"/"+repo != agreeRepo || token != agreeAgentTok {
			return nil, fmt.Errorf("unexpected connection to %s, %s/%s, token %q", server, owner, repo, token)
		}
		return srv.As(agreeAgent), nil
	}

	tools := newAgreeTools(t)
	dir := t.TempDir()
	var rows []*agreeRow
	var tally struct {
		actionPass, actionFail, checkPass, checkFail, pruned      int
		written, refused, unreadable, skipped, nextPass, nextFail int
	}
	for i, sc := range scenarios {
		clock := &agreeClock{t: agreeStart}
		srv = newAgreeServer(clock, sc.body.number, sc.body.text, sc.labels, sc.config)
		run := &agreeRun{t: t, dir: filepath.Join(dir, strconv.Itoa(i)), clock: clock, tools: tools}
		if err := os.Mkdir(run.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		row := &agreeRow{sc: sc}
		rows = append(rows, row)
		run.scenario(srv, row)

		if row.dry.pass() {
			tally.actionPass++
		} else {
			tally.actionFail++
		}
		if row.check.pass() {
			tally.checkPass++
		} else {
			tally.checkFail++
		}
		if row.prune.pruned {
			tally.pruned++
		}
		switch row.report.outcome {
		case "written":
			tally.written++
		case "refused":
			tally.refused++
		case "unreadable":
			tally.unreadable++
		default:
			tally.skipped++
		}
		switch {
		case row.next.outcome == "":
		case row.next.pass():
			tally.nextPass++
		default:
			tally.nextFail++
		}
	}

	t.Logf("%d scenarios (%d bodies × %d configuration files × %d label sets)", len(scenarios), len(bodies), len(agreeConfigs), len(agreeLabelSets))
	t.Logf("action: %d pass, %d fail; check: %d pass, %d fail; prune: %d pruned; report: %d written, %d refused, %d unreadable, %d not governed; the action's run after report: %d pass, %d fail",
		tally.actionPass, tally.actionFail, tally.checkPass, tally.checkFail, tally.pruned,
		tally.written, tally.refused, tally.unreadable, tally.skipped, tally.nextPass, tally.nextFail)
	if len(scenarios) < 30 {
		t.Errorf("%d scenarios, want at least 30", len(scenarios))
	}
	var failing, known []*agreeRow
	for _, r := range rows {
		switch {
		case len(r.problems) == 0:
		case knownDisagreement[r.sc.name()] != "":
			known = append(known, r)
		default:
			failing = append(failing, r)
		}
	}
	for _, r := range known {
		t.Logf("known disagreement: %s\n    %s\n    diagnosis: %s", r.line(), strings.Join(r.problems, "\n    "), knownDisagreement[r.sc.name()])
	}
	for name := range knownDisagreement {
		if !slices.ContainsFunc(rows, func(r *agreeRow) bool { return r.sc.name() == name && len(r.problems) > 0 }) {
			t.Errorf("knownDisagreement names %q, which agrees now (or is no scenario): drop the entry", name)
		}
	}
	if len(failing) > 0 {
		var b strings.Builder
		b.WriteString("scenario (body | configuration file | labels) | (a) action | (b) check | (c) prune | (d) report → the action's next run\n")
		for _, r := range failing {
			fmt.Fprintf(&b, "%s\n    %s\n", r.line(), strings.Join(r.problems, "\n    "))
		}
		t.Errorf("%d of %d scenarios disagree:\n%s", len(failing), len(scenarios), b.String())
	}
	t.Logf("ran in %v", time.Since(start).Round(time.Millisecond))
}

// agreeRun runs the entry points of one scenario.
type agreeRun struct {
	t     *testing.T
	dir   string
	clock *agreeClock
	runs  int
	tools *agreeTools
}

// scenario runs every entry point on the scenario's issue and notes where
// one disagrees with the action.
func (r *agreeRun) scenario(srv *agreeServer, row *agreeRow) {
	sc := row.sc
	row.check = r.check(sc)
	r.checkTool(row)
	row.prune = r.prune(sc)

	// (a) The action's dry run on the opened issue writes nothing.
	writes := srv.writes()
	row.dry = r.action(srv, "opened", agreeOpener, true)
	if srv.writes() != writes {
		row.disagree("the action's dry run wrote to the issue (%d writes)", srv.writes()-writes)
	}
	r.clock.tick()
	before := srv.issue().Body
	row.real = r.action(srv, "opened", agreeOpener, false)
	r.clock.tick()
	// The first run writes the body's read hint; only a prune changes the
	// checkpoint besides.
	beyondHint := func(body string) string { return checkpoint.WithHint(body, time.Unix(1, 0), 0) }
	written := beyondHint(srv.issue().Body) != beyondHint(before)

	// (a) = (b): the verdict and its failing rules.
	if row.dry.pass() != row.check.pass() || !slices.Equal(row.dry.rules, row.check.rules) {
		row.disagree("verdict: the action %s, check %s", row.dry, row.check)
	}
	if row.real.code != row.dry.code || !slices.Equal(row.real.rules, row.dry.rules) {
		row.disagree("verdict: the action's dry run %s, its real run %s", row.dry, row.real)
	}
	// (c): prune prunes exactly when the action's plan does, and the run
	// made the body it planned.
	if row.prune.pruned != row.dry.pruned {
		row.disagree("prune: the action's plan prunes: %v; prune prunes: %v", row.dry.pruned, row.prune.pruned)
	}
	if row.real.pruned != row.dry.pruned || row.real.pruned != written {
		row.disagree("prune: the dry run's pruned=%v, the run's pruned=%v, the checkpoint written: %v", row.dry.pruned, row.real.pruned, written)
	}

	// (d): report judges the state it leaves as the action's next run.
	if row.real.outcome == "skipped" {
		row.report.outcome = "n/a (not governed)"
		return
	}
	writes = srv.writes()
	row.report = r.report(sc, false)
	r.clock.tick()
	switch row.report.outcome {
	case "written":
		row.next = r.action(srv, "edited", agreeAgent, false)
		if !row.next.pass() {
			row.disagree("report accepted (written) the state on which the action's next run fails: %s", row.next)
		}
	case "refused":
		row.forced = r.report(sc, true)
		r.clock.tick()
		if row.forced.outcome != "written" {
			row.disagree("report --force did not write the refused report: %s", row.forced.outcome)
		}
		row.next = r.action(srv, "edited", agreeAgent, false)
		if row.next.pass() {
			row.disagree("report refused (rules %v), yet the action's next run on the state --force left passes", row.report.rules)
		}
		if !slices.Equal(row.report.rules, row.next.rules) {
			row.disagree("report refused for %v, the action's next run on the state --force left fails for %v", row.report.rules, row.next.rules)
		}
	case "unreadable":
		// Nothing was written: the action's next run on the same state
		// must fail too.
		if srv.writes() != writes {
			row.disagree("report found the checkpoint unreadable, yet wrote to the issue (%d writes)", srv.writes()-writes)
		}
		row.next = r.action(srv, "edited", agreeAgent, false)
		if row.next.pass() {
			row.disagree("report found the checkpoint unreadable, yet the action passes it")
		}
	default:
		row.disagree("report: unexpected outcome %q", row.report.outcome)
	}
}

// main runs the command line as an agent would, with files from memory.
func (r *agreeRun) main(sc agreeScenario, args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, r.env(sc, &out, &errOut))
	return out.String(), errOut.String(), code
}

// env is the world of the scenario's agent: its files, from memory, and
// the server and token in its environment.
func (r *agreeRun) env(sc agreeScenario, out, errOut *bytes.Buffer) Env {
	files := map[string][]byte{agreeBodyPath: []byte(sc.body.text)}
	if sc.config != nil {
		files[agreeConfigPath] = sc.config
	}
	vars := map[string]string{"GITHUB_SERVER_URL": agreeServerURL, "GITEA_TOKEN": agreeAgentTok}
	return Env{
		Stdin:  strings.NewReader(""),
		Stdout: out,
		Stderr: errOut,
		Getenv: func(k string) string { return vars[k] },
		ReadFile: func(name string) ([]byte, error) {
			if data, ok := files[name]; ok {
				return data, nil
			}
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		},
		AppendFile: func(string, []byte) error { return nil },
		Now:        r.clock.now,
	}
}

// offlineArgs are the flags that give check and prune the scenario's
// configuration file and live labels.
func offlineArgs(sc agreeScenario) []string {
	var args []string
	if sc.config != nil {
		args = append(args, "--config", agreeConfigPath)
	}
	// The live labels, always: an empty --labels says the issue has none
	// (without the flag, the checkpoint's own record of them stands in).
	args = append(args, "--labels", strings.Join(sc.labels, ","))
	return append(args, "--format", "json")
}

// check runs `check FILE --config CFG --labels L --format json`.
func (r *agreeRun) check(sc agreeScenario) agreeVerdict {
	out, errOut, code := r.main(sc, append([]string{"check", agreeBodyPath}, offlineArgs(sc)...)...)
	var rep checkReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		r.t.Fatalf("%s: check printed no report (exit %d): %v\n%s%s", sc.name(), code, err, out, errOut)
	}
	return agreeVerdict{code: code, rules: failingRules(rep.Findings)}
}

// prune runs `prune FILE --config CFG --labels L --format json`.
func (r *agreeRun) prune(sc agreeScenario) agreeVerdict {
	out, errOut, code := r.main(sc, append([]string{"prune", agreeBodyPath}, offlineArgs(sc)...)...)
	var rep pruneReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		r.t.Fatalf("%s: prune printed no report (exit %d): %v\n%s%s", sc.name(), code, err, out, errOut)
	}
	return agreeVerdict{code: code, pruned: rep.Pruned}
}

// report runs the agent's `report` on the live issue, with no settings
// flags: it judges with the repository's configuration file, as the action.
func (r *agreeRun) report(sc agreeScenario, force bool) agreeVerdict {
	b := sc.body
	args := []string{"report", "--repo", agreeRepo, "--issue", strconv.FormatInt(b.number, 10),
		"--agent", b.agent, "--invocation", agreeInvocation, "--consumed", strconv.Itoa(agreeConsumed),
		"--action", "implemented the next step", "--next-agent", b.next, "--next-estimate", strconv.FormatInt(b.estimate, 10),
		"--format", "json"}
	if force {
		args = append(args, "--force")
	}
	out, errOut, code := r.main(sc, args...)
	var res agentwrite.ReportResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Outcome == "" {
		var je exitcode.JSONError
		if err := json.Unmarshal([]byte(out), &je); err != nil || je.Error.Kind != "violations" {
			r.t.Fatalf("%s: report (exit %d) printed neither a report nor a violation:\n%s%s", sc.name(), code, out, errOut)
		}
		return agreeVerdict{code: code, outcome: "unreadable"}
	}
	return agreeVerdict{code: code, outcome: res.Outcome, rules: failingRules(res.Findings)}
}

// action runs action mode in process on the fake server, with the
// environment a Gitea runner gives the step for an issues event: the
// Actions payload (no `changes` for edited), an input for every input of
// action.yml ("" for those a file may set, which have no default there),
// the Actions token.
func (r *agreeRun) action(srv *agreeServer, act, sender string, dry bool) agreeVerdict {
	r.runs++
	is := srv.issue()
	payload, err := json.Marshal(giteaIssuesPayload(srv, act, sender))
	if err != nil {
		r.t.Fatal(err)
	}
	output := filepath.Join(r.dir, fmt.Sprintf("output-%d", r.runs))
	vars := map[string]string{
		"GITHUB_ACTIONS":          "true",
		"GITEA_ACTIONS":           "true",
		"GITHUB_REPOSITORY":       agreeRepo,
		"GITHUB_REPOSITORY_OWNER": "org",
		"GITHUB_SERVER_URL":       agreeServerURL,
		"GITHUB_EVENT_NAME":       "issues",
		"GITHUB_EVENT_PATH":       agreeEventPath,
		"GITHUB_OUTPUT":           output,
		"GITHUB_STEP_SUMMARY":     filepath.Join(r.dir, fmt.Sprintf("summary-%d", r.runs)),
		"GITHUB_SHA":              agreeSHA,
		"GITHUB_REF":              "refs/heads/main",
		"GITHUB_ACTOR":            sender,
		"GITHUB_WORKSPACE":        r.dir,
		"GNS_GUARD_ACTIONS_TOKEN": agreeActionsTok,
	}
	for _, s := range settings.Table() {
		if s.Input {
			vars["INPUT_"+strings.ToUpper(s.Name)] = ""
		}
	}
	vars["INPUT_TOKEN"] = agreeActionsTok
	if dry {
		vars["INPUT_DRY-RUN"] = "true"
	}
	var out, errOut bytes.Buffer
	err = action.Run(context.Background(), action.Options{
		Getenv: func(k string) string { return vars[k] },
		Stdout: &out,
		Stderr: &errOut,
		ReadFile: func(name string) ([]byte, error) {
			if name == agreeEventPath {
				return payload, nil
			}
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		},
		AppendFile: func(string, []byte) error { return nil },
		NewForge: func(apiURL, token, owner, repo string) (port.Forge, error) {
			if apiURL != agreeServerURL+"/api/v1" || owner+"/"+repo != agreeRepo || token != agreeActionsTok {
				return nil, fmt.Errorf("unexpected connection to %s, %s/%s", apiURL, owner, repo)
			}
			return srv.As(issues.ActionsUser), nil
		},
		Now: r.clock.now,
	})
	code := exitcode.Code(err)
	outputs := readOutputs(r.t, output)
	v := agreeVerdict{code: code, outcome: outputs["result"], pruned: outputs["pruned"] == "true"}
	if code != exitcode.Clean && code != exitcode.Violation {
		r.t.Fatalf("issue #%d (%s, dry run %v): the action could not run (exit %d): %v\n%s%s", is.Number, act, dry, code, err, out.String(), errOut.String())
	}
	var violations []finding.Finding
	if s := outputs["violations"]; s != "" {
		if err := json.Unmarshal([]byte(s), &violations); err != nil {
			r.t.Fatalf("issue #%d: the violations output is not JSON: %v: %s", is.Number, err, s)
		}
	}
	v.rules = failingRules(violations)
	return v
}

// giteaIssuesPayload is the payload Gitea's Actions hands a step for an
// issues event: the issue as it is now, the repository and the sender. An
// edited event carries no `changes` (a webhook's would).
func giteaIssuesPayload(srv *agreeServer, act, sender string) map[string]any {
	is := srv.issue()
	labels := []map[string]any{}
	for _, l := range is.Labels {
		labels = append(labels, map[string]any{"id": l.ID, "name": l.Name, "color": "ededed", "exclusive": true, "url": fmt.Sprintf("%s/api/v1/repos/%s/labels/%d", agreeServerURL, agreeRepo, l.ID)})
	}
	user := func(login string, id int) map[string]any {
		return map[string]any{"id": id, "login": login, "username": login, "full_name": "", "email": login + "@noreply.gitea.test"}
	}
	repo := map[string]any{
		"id": 1, "name": "proj", "full_name": agreeRepo, "owner": user("org", 1), "private": false,
		"html_url": agreeServerURL + "/" + agreeRepo, "default_branch": "main",
	}
	at := is.UpdatedAt.Format(time.RFC3339)
	return map[string]any{
		"action": act,
		"number": is.Number,
		"issue": map[string]any{
			"id": 500 + is.Number, "number": is.Number, "title": is.Title, "body": is.Body,
			"url":      fmt.Sprintf("%s/api/v1/repos/%s/issues/%d", agreeServerURL, agreeRepo, is.Number),
			"html_url": fmt.Sprintf("%s/%s/issues/%d", agreeServerURL, agreeRepo, is.Number),
			"user":     user(agreeOpener, 2), "labels": labels, "state": is.State, "is_locked": is.Locked,
			"comments": is.Comments, "created_at": agreeStart.Format(time.RFC3339), "updated_at": at,
			"pull_request": nil, "repository": map[string]any{"id": 1, "name": "proj", "owner": "org", "full_name": agreeRepo},
		},
		"repository": repo,
		"sender":     user(sender, 3),
		"commit_id":  "",
	}
}

// readOutputs reads the step's outputs from the GITHUB_OUTPUT file
// (name<<DELIMITER, value, DELIMITER).
func readOutputs(t *testing.T, name string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("the action wrote no outputs: %v", err)
	}
	out := map[string]string{}
	lines := strings.Split(string(data), "\n")
	for i := 0; i+2 < len(lines); i++ {
		key, delim, ok := strings.Cut(lines[i], "<<")
		if !ok || lines[i+2] != delim {
			continue
		}
		out[key] = lines[i+1]
		i += 2
	}
	return out
}

// failingRules are the rules of the findings that fail a run, sorted, each
// once.
func failingRules(fs []finding.Finding) []string {
	var out []string
	for _, f := range fs {
		if f.IsError() && !slices.Contains(out, f.Rule) {
			out = append(out, f.Rule)
		}
	}
	slices.Sort(out)
	return out
}
