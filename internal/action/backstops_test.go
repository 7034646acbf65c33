package action_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// The fourth attack round: backstops an issue writer cannot switch off,
// each as a hostile write collaborator does it on the real server, fed
// the Actions payloads the runs recorded.

// Attack: the owner's ordinary issue gains a checkpoint of 900,000 tokens
// by an agent's edit. The guard adopts a first state without an approver
// only as the issue was opened; a re-run of the old opened run (its
// payload says opened) adopts nothing either.
func TestCheckpointEditedIntoAnOrdinaryIssue(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	n, opened := f.Open(t, "ordinary", func(int64) string { return "Tidy up the changelog." })
	f.Run(t, opened, "ledger-key", ledgerKey).Expect(t, 0, "skipped")
	big := replace(t, actiontest.Example(t, "healthy.md", n), "total: 20000", "total: 900000", "remaining: 13800", "remaining: 893800")
	r := f.Run(t, f.EditBody(t, n, agent, big), "ledger-key", ledgerKey)
	expectTampered(t, f, n, r, "edited since it was opened")
	st := f.Step("ledger-key", ledgerKey)
	st.Env["GITHUB_RUN_ATTEMPT"] = "2"
	r = st.Run(t, opened)
	r.Expect(t, 1, "fail")
	if !slices.Contains(r.Rules(t), "permission-violation") || !f.Issue(t, n).Has("permission::violation") {
		t.Errorf("the re-run of the opened run let the state through: %v", r.Rules(t))
	}
	if body := f.Status(t, n).Body; strings.Contains(body, `"baseline":true`) {
		t.Errorf("900,000 became the baseline:\n%s", body)
	}
}

// Attack: with default-max-depth 2, an agent opens its own issue labelled
// cascade::depth-n at depth 7. A new issue relaxes no rule: the label set
// by a non-approver goes, and the issue waits for an approver.
func TestNewIssueTakesNoDepth(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	deep := func(n int64) string {
		return replace(t, actiontest.Example(t, "healthy.md", n), "depth: 1", "depth: 7", "  agent_chain: [orchestrator, lead-developer]\n", "")
	}
	n, d := f.OpenAs(t, agent, "deep", deep, "cascade::depth-n", "size::medium")
	r := f.Run(t, d, "ledger-key", ledgerKey, "default-max-depth", "2")
	expectTampered(t, f, n, r, "cascade::depth-n label relaxes a rule", `added by "`+agent.Login+`"`)
	if rules := r.Rules(t); !slices.Contains(rules, "depth-exceeded") {
		t.Errorf("depth 7 was judged against cascade::depth-n: %v", rules)
	}
	if f.Issue(t, n).Has("cascade::depth-n") || strings.Contains(f.Status(t, n).Body, `"baseline":true`) {
		t.Errorf("cascade::depth-n stayed, or the state was adopted:\n%s", f.Status(t, n).Body)
	}
}

// budgetLines matches the checkpoint's budget.
var budgetLines = regexp.MustCompile(`total: \d+\n(\s+)consumed: \d+\n\s+remaining: \d+`)

// spend sets the checkpoint's budget to total, consumed and the rest.
func spend(t *testing.T, body string, total, consumed int) string {
	t.Helper()
	if !budgetLines.MatchString(body) {
		t.Fatalf("no budget in the body:\n%s", body)
	}
	return budgetLines.ReplaceAllString(body, fmt.Sprintf("total: %d\n${1}consumed: %d\n${1}remaining: %d", total, consumed, total-consumed))
}

// Attack: with repository-budget 100,000 and phase-grant 20,000, an
// agent spends its phase to the prune threshold again and again: every
// new phase the guard's prune makes takes its phase grant. Every phase is
// counted: the grants stay within the repository budget, and the phase
// after it carries its remainder over and nothing more.
func TestEveryPhaseCountsAgainstTheRepositoryBudget(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	in := anchoredInputs(f, "repository-budget", "100000", "phase-grant", "20000")
	n, d := f.Open(t, "phases", func(n int64) string { return spend(t, actiontest.Example(t, "healthy.md", n), 40000, 0) }, governed...)
	f.Run(t, d, in...).Expect(t, 0, "pass")
	spent := 0
	for range 5 {
		total := ledgerTotal(t, f, n)
		consumed := total - total/10
		spent += consumed
		r := f.Run(t, f.EditBody(t, n, agent, spend(t, f.Issue(t, n).Body, total, consumed)), in...)
		t.Logf("phase of %d, %d spent: pruned %s, grants %v", total, consumed, r.Outputs["pruned"], grantsOf(t, f))
	}
	if got := grantsOf(t, f)[n]; got > 100000 || spent > 100000 {
		t.Errorf("the issue was granted %d and spent %d, over repository-budget 100,000", got, spent)
	}
	if total := ledgerTotal(t, f, n); total > 1000 {
		t.Errorf("the last phase took %d tokens with the repository budget spent", total)
	}
}

// ledgerTotal is budget.total as the ledger accepted it.
func ledgerTotal(t *testing.T, f fixture, n int64) int {
	t.Helper()
	m := regexp.MustCompile(`"total":(\d+),`).FindStringSubmatch(f.Status(t, n).Body)
	if m == nil {
		t.Fatalf("no total in the ledger:\n%s", f.Status(t, n).Body)
	}
	total, _ := strconv.Atoi(m[1])
	return total
}

// Attack: the posture is judged once per commit; a collaborator given
// Code write afterwards, with no commit, comments on the issue. The
// account the stamp does not know is checked (one request) and the
// posture judged again: the guard names her, as doctor does.
func TestPostureSeesAccessGivenWithoutACommit(t *testing.T) {
	f := newFixture(t)
	f.CommitFile(t, ".gitea/workflows/gns-guard.yml", guardWorkflow)
	inputs := anchoredInputs(f)
	n, d := f.Open(t, "posture drift", example(t, "healthy.md"), governed...)
	f.Run(t, d, inputs...).Expect(t, 0, "pass")
	r := f.Run(t, d, inputs...)
	if r.Requests != 2 || !noPosture(t, r) {
		t.Fatalf("a clean pass for the same commit made %d requests, or judged the posture:\n%s", r.Requests, r.Stdout)
	}
	late := f.User(t, "late", giteatest.PermWrite)
	_, c := f.Comment(t, n, late, "I can push code now")
	r = f.Run(t, c, inputs...)
	if !strings.Contains(postureWarnings(t, r)["accounts.code-write"], late.Login) {
		t.Errorf("the collaborator added without a commit is not named:\n%v\n%s", postureWarnings(t, r), r.Stdout)
	}
	// Known now: the next run from her asks nothing.
	_, c = f.Comment(t, n, late, "and again")
	if r = f.Run(t, c, inputs...); !noPosture(t, r) || strings.Contains(r.Stdout, "did not know the account") {
		t.Errorf("the account was checked again:\n%s", r.Stdout)
	}
}

// Attack: the owner adds an ordinary label; before the guard's run reads
// the timeline, an agent renames its definition to size::large (on a pull
// request, needs-review to permission::evolve-system). The timeline
// credits the owner, but the governance labels are pinned by id: the
// label is a forgery, counts for nothing, and fails the run.
func TestRenameBeforeTheRunIsAForgery(t *testing.T) {
	f := newFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	n, _ := anchoredIssue(t, f, "pinned")
	if v := variableOf(t, f, ledger.PinsName); !strings.Contains(v, `"size::medium":`) {
		t.Fatalf("the first run pinned no labels: %q", v)
	}
	d := f.AddLabels(t, "issues", n, "phase::review")
	renameLabel(t, f, agent, "phase::review", "size::large")
	r := f.Run(t, d, anchoredInputs(f)...)
	expectTampered(t, f, n, r, `"size::large" (id`, "forgery")
	if f.Issue(t, n).Has("size::large") || r.Outputs["context-ratio"] == "" || strings.Contains(f.Status(t, n).Body, `"size":"large"`) {
		t.Errorf("the renamed label took effect: %v\n%s", f.Issue(t, n).LabelNames(), f.Status(t, n).Body)
	}

	p, pd := openPull(t, f, "renamed-evolve-pinned", ".kilo/agents/reviewer.md")
	f.Run(t, pd, anchoredInputs(f)...).Expect(t, 1, "fail")
	d = f.AddLabels(t, "pull_request_target", p, "needs-review")
	renameLabel(t, f, agent, "needs-review", "permission::evolve-system")
	r = f.Run(t, d, anchoredInputs(f)...)
	r.Expect(t, 1, "fail")
	if rules := r.Rules(t); !slices.Contains(rules, "protected-path") || !findingSays(t, r, `"permission::evolve-system" (id`, "forgery") {
		t.Errorf("the renamed label opened the protected path: %v %v", rules, r.Violations(t))
	}
}

// variableOf reads a repository variable as the owner ("" when none).
func variableOf(t *testing.T, f fixture, name string) string {
	t.Helper()
	return f.Variable(t, name)
}
