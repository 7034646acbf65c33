package guard

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

func counter(t *testing.T) *tokens.Counter {
	t.Helper()
	c, err := tokens.New(tokens.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// body builds an issue body around a checkpoint; edit rewrites lines of it.
func body(edits ...string) string {
	cp := `checkpoint:
  version: 2
  issue: 9
  phase: build
  depth: 1
  last_agent: dev
  last_invocation: inv-3
  budget:
    total: 10000
    consumed: 3000
    remaining: 7000
  state:
    labels: [cascade::depth-2]
    assignee: dev
  history_tail:
    - {agent: orchestrator, action: planned, timestamp: "2026-05-16T12:58:00Z"}
  next_agent: reviewer
  next_estimated_tokens: 1500
  created_at: "2026-05-16T12:50:00Z"
`
	for i := 0; i+1 < len(edits); i += 2 {
		cp = strings.Replace(cp, edits[i], edits[i+1], 1)
	}
	return "# Issue nine\n\nSome text.\n\n```yaml\n" + cp + "```\n"
}

func input(t *testing.T, b string, labels ...string) Input {
	in := Input{
		Config:  config.Default(),
		Issue:   issues.Issue{Number: 9, Body: b},
		Event:   issues.Event{Name: "issues", Action: "edited", Number: 9, Sender: "alice"},
		Self:    issues.ActionsUser,
		Now:     time.Date(2026, 5, 16, 14, 0, 0, 0, time.UTC),
		Counter: counter(t),
	}
	for i, l := range labels {
		in.Issue.Labels = append(in.Issue.Labels, issues.Label{ID: int64(i + 1), Name: l})
	}
	return in
}

func ruleIDs(p *Plan) []string {
	var ids []string
	for _, v := range p.Violations {
		ids = append(ids, v.Rule)
	}
	slices.Sort(ids)
	return ids
}

func TestCleanIssueMakesNoWrites(t *testing.T) {
	p := Decide(input(t, body(), "cascade::depth-2"))
	if !p.Governed || len(p.Violations) != 0 || len(p.Warnings) != 0 {
		t.Fatalf("violations %v warnings %v", p.Violations, p.Warnings)
	}
	if len(p.AddLabels)+len(p.RemoveLabels) != 0 || p.Lock != "" || p.Prune != nil || p.Recovery != "" || p.Digest != "" || !p.Resolved {
		t.Fatalf("a clean issue planned writes: %+v", p)
	}
	if p.Numbers.MaxDepth != 2 || p.Numbers.BudgetRemaining != 7000 || p.Numbers.TaskSize != "tiny" {
		t.Errorf("numbers: %+v", p.Numbers)
	}
}

func TestNotGoverned(t *testing.T) {
	p := Decide(input(t, "# plain issue\n\n```yaml\nservices: {}\n```\n", "bug"))
	if p.Governed || p.Skipped == "" || len(p.Violations) != 0 {
		t.Fatalf("%+v", p)
	}
}

func TestDepthExceeded(t *testing.T) {
	in := input(t, body("depth: 1", "depth: 3"), "cascade::depth-2")
	p := Decide(in)
	if got := ruleIDs(p); !slices.Equal(got, []string{RuleDepthExceeded}) {
		t.Fatalf("rules %v", got)
	}
	v := p.Violations[0]
	if v.Line != 10 || v.Col != 10 || !strings.Contains(v.Message, "depth 3 is over the cascade limit of 2") {
		t.Errorf("finding %+v", v.Finding)
	}
	if !slices.Equal(p.AddLabels, []string{"cascade::depth-exceeded"}) || p.Lock == "" {
		t.Errorf("effects: add %v lock %q", p.AddLabels, p.Lock)
	}
	// The second run: label present, issue locked: nothing more to write.
	in.Issue.Labels = append(in.Issue.Labels, issues.Label{ID: 50, Name: "cascade::depth-exceeded"})
	in.Issue.Locked = true
	p = Decide(in)
	if len(p.AddLabels) != 0 || p.Lock != "" || len(p.RemoveLabels) != 0 {
		t.Errorf("re-run planned writes: add %v lock %q remove %v", p.AddLabels, p.Lock, p.RemoveLabels)
	}
	// Fixed: the guard removes its label.
	in.Issue.Body = body()
	p = Decide(in)
	if len(p.Violations) != 0 || len(p.RemoveLabels) != 1 || p.RemoveLabels[0].Name != "cascade::depth-exceeded" {
		t.Errorf("fixed issue: violations %v remove %v", p.Violations, p.RemoveLabels)
	}
}

func TestUnlimitedAndDefaultDepth(t *testing.T) {
	if p := Decide(input(t, body("depth: 1", "depth: 40"), "cascade::depth-n")); len(p.Violations) != 0 {
		t.Errorf("depth-n: %v", ruleIDs(p))
	}
	in := input(t, body())
	if p := Decide(in); !slices.Equal(ruleIDs(p), []string{RuleCascadeMissing}) {
		t.Errorf("no cascade label: %v", ruleIDs(p))
	}
	zero := 0
	in.Config.DefaultMaxDepth = &zero
	if p := Decide(in); !slices.Equal(ruleIDs(p), []string{RuleDepthExceeded}) {
		t.Errorf("default-max-depth 0: %v", ruleIDs(p))
	}
	in = input(t, body(), "cascade::depth-2", "cascade::depth-1")
	if p := Decide(in); !slices.Equal(ruleIDs(p), []string{RuleCascadeConflict}) {
		t.Errorf("two cascade labels: %v", ruleIDs(p))
	}
}

func TestBudget(t *testing.T) {
	p := Decide(input(t, body("consumed: 3000", "consumed: 10000", "remaining: 7000", "remaining: 0"), "cascade::depth-2"))
	if !slices.Equal(ruleIDs(p), []string{RuleBudgetExhausted}) || !slices.Equal(p.AddLabels, []string{"budget::exhausted"}) {
		t.Fatalf("rules %v add %v", ruleIDs(p), p.AddLabels)
	}
	// budget::exhausted stays until a person removes it, even when the
	// checkpoint shows budget again.
	p = Decide(input(t, body(), "cascade::depth-2", "budget::exhausted"))
	if !slices.Equal(ruleIDs(p), []string{RuleBudgetExhausted}) || len(p.RemoveLabels) != 0 {
		t.Fatalf("rules %v remove %v", ruleIDs(p), p.RemoveLabels)
	}
	p = Decide(input(t, body("next_estimated_tokens: 1500", "next_estimated_tokens: 3501"), "cascade::depth-2", "size::medium"))
	if !slices.Equal(ruleIDs(p), []string{RuleNextOverBudget}) {
		t.Fatalf("next over budget: %v", ruleIDs(p))
	}
	if !strings.Contains(p.Violations[0].Message, "3501 tokens, more than half of the 7000 remaining") {
		t.Errorf("message: %s", p.Violations[0].Message)
	}
}

func TestAgentsNotAllowed(t *testing.T) {
	in := input(t, body("next_agent: reviewer", "next_agent: intruder"), "cascade::depth-2")
	in.Config.AllowedAgents = []string{"dev", "reviewer", "orchestrator"}
	p := Decide(in)
	if !slices.Equal(ruleIDs(p), []string{RuleAgentNotAllowed}) || p.Lock == "" || !slices.Equal(p.AddLabels, []string{"permission::violation"}) {
		t.Fatalf("rules %v lock %q add %v", ruleIDs(p), p.Lock, p.AddLabels)
	}
	if p.Violations[0].KeyPath != "checkpoint.next_agent" {
		t.Errorf("key path %s", p.Violations[0].KeyPath)
	}
	// permission::violation is never removed by the guard.
	in.Issue.Body = body()
	in.Issue.Labels = append(in.Issue.Labels, issues.Label{ID: 7, Name: "permission::violation"})
	if p := Decide(in); len(p.RemoveLabels) != 0 {
		t.Errorf("removed %v", p.RemoveLabels)
	}
}

func TestContextPressureCountsTheLastThreeComments(t *testing.T) {
	in := input(t, body(), "cascade::depth-2", "size::tiny")
	big := strings.Repeat("lorem ipsum dolor sit amet ", 300) // ~1,500 tokens
	for i := range 5 {
		in.Recent = append(in.Recent, issues.Comment{ID: int64(i + 1), Author: "dev", Body: fmt.Sprintf("comment %d: %s", i, big)})
	}
	p := Decide(in)
	if !slices.Contains(ruleIDs(p), RuleContextPressure) || !slices.Equal(p.AddLabels, []string{"context::pressure-high"}) {
		t.Fatalf("rules %v add %v numbers %+v", ruleIDs(p), p.AddLabels, p.Numbers)
	}
	n := p.Numbers
	// Each of the last 3 comments is loaded whole, under its heading.
	want := 0
	for _, c := range in.Recent[2:] {
		want += in.Counter.Count(c.Body)
	}
	if n.CommentTokens < want || n.CommentTokens > want+3*30 || n.EntryTokens <= n.CheckpointTokens+n.CommentTokens ||
		n.ContextTokens != int64(n.EntryTokens)+1500 || n.MaxContext != 4000 {
		t.Errorf("numbers %+v, want comment tokens %d and a few headings", n, want)
	}
	// Quiet comments: the gate clears and the guard removes its label.
	in.Recent = in.Recent[:0]
	in.Issue.Labels = append(in.Issue.Labels, issues.Label{ID: 99, Name: "context::pressure-high"})
	p = Decide(in)
	if len(p.Violations) != 0 || len(p.RemoveLabels) != 1 {
		t.Errorf("rules %v remove %v", ruleIDs(p), p.RemoveLabels)
	}
}

// The guard's own comments (status, archive, digest, recovery: its marker
// and its author) are not part of the entry load; a marker in anyone
// else's comment is, as `context` loads it.
func TestContextPressureLeavesOutTheGuardsOwnComments(t *testing.T) {
	in := input(t, body(), "cascade::depth-2", "size::tiny")
	big := strings.Repeat("lorem ipsum dolor sit amet ", 300) // ~1,500 tokens
	in.Recent = []issues.Comment{{ID: 1, Author: "dev", Body: "short note"}}
	for i, m := range []string{issues.StatusMarker(9), issues.ArchiveMarkerPrefix(9) + " phase=build part=1/1 -->", issues.DigestMarker(9), issues.RecoveryMarker(9)} {
		in.Recent = append(in.Recent, issues.Comment{ID: int64(i + 2), Author: in.Self, Body: m + "\n" + big})
	}
	p := Decide(in)
	if slices.Contains(ruleIDs(p), RuleContextPressure) {
		t.Fatalf("the guard's own comments counted: rules %v numbers %+v", ruleIDs(p), p.Numbers)
	}
	if c := p.Numbers.CommentTokens; c > 40 {
		t.Errorf("comment tokens %d: only the short note is loaded", c)
	}
	// The same comments by an agent are loaded, and count.
	for i := 1; i < len(in.Recent); i++ {
		in.Recent[i].Author = "dev"
	}
	if p := Decide(in); !slices.Contains(ruleIDs(p), RuleContextPressure) {
		t.Errorf("comments with the guard's markers by another user were left out: rules %v numbers %+v", ruleIDs(p), p.Numbers)
	}
}

func TestCommentProtocol(t *testing.T) {
	footer := `<!-- GNS_EVENT {"agent":"dev","invocation":"inv-4","event_type":"subagent_result","phase":"build","depth":1,"budget":{"before":7000,"consumed":500,"remaining":6500},"status":"done","verdict":"pass","files_changed":2,"key_stats":{"tests":12},"next_agent":"reviewer"} -->`
	cases := []struct {
		name, body string
		want       []string
		msg        string
	}{
		{"good", "## 🔄 dev | phase:build | depth:1\n\nDid it.\n\n" + footer, nil, ""},
		{"not an agent comment", "LGTM", nil, ""},
		{"bad header", "## 🔄 dev | phase: build | depth:1\n\n" + footer, []string{RuleCommentProtocol}, "does not match"},
		{"no footer", "## 🔄 dev | phase:build | depth:1\n\nDid it.\n", []string{RuleCommentProtocol}, "footer is missing"},
		{"bad json", "## 🔄 dev | phase:build | depth:1\n\n<!-- GNS_EVENT {\"agent\": } -->", []string{RuleCommentProtocol}, "not valid JSON"},
		{"depth over limit", strings.ReplaceAll("## 🔄 dev | phase:build | depth:3\n\n"+footer, `"depth":1`, `"depth":3`), []string{RuleCommentProtocol}, "depth 3, over the cascade limit of 2"},
		{"phase mismatch", strings.NewReplacer(`"phase":"build"`, `"phase":"test"`, `"invocation":"inv-4"`, `"invocation":"inv-3"`).Replace("## 🔄 dev | phase:test | depth:1\n\n" + footer),
			[]string{RuleCommentProtocol}, `phase "test" but the checkpoint is in phase "build"`},
		// A report moving the checkpoint to a new phase posts its result
		// before it patches the body: the run of its comment may read the
		// body before the patch.
		{"a report in flight moves the phase", strings.ReplaceAll("## 🔄 dev | phase:test | depth:1\n\n"+footer, `"phase":"build"`, `"phase":"test"`), nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := input(t, body(), "cascade::depth-2")
			c := issues.Comment{ID: 77, Author: "dev", Body: tc.body}
			in.Event = issues.Event{Name: "issue_comment", Action: "created", Number: 9, Comment: &c}
			in.Recent = []issues.Comment{c}
			p := Decide(in)
			if got := ruleIDs(p); !slices.Equal(got, tc.want) {
				t.Fatalf("rules %v, want %v: %v", got, tc.want, p.Violations)
			}
			if tc.msg != "" && !strings.Contains(p.Violations[0].Message, tc.msg) {
				t.Errorf("message %q lacks %q", p.Violations[0].Message, tc.msg)
			}
			if tc.msg != "" && p.Violations[0].KeyPath != "comment#77" {
				t.Errorf("key path %q", p.Violations[0].KeyPath)
			}
		})
	}
}

func TestProtectedPaths(t *testing.T) {
	in := input(t, "a pull request", "size::small")
	in.Event = issues.Event{Name: "pull_request", Action: "synchronize", Number: 9, IsPull: true}
	in.PullFiles = []string{"src/main.go", ".kilo/rules/global.md"}
	p := Decide(in)
	if !slices.Equal(ruleIDs(p), []string{RuleProtectedPath}) || !slices.Equal(p.AddLabels, []string{"permission::violation"}) {
		t.Fatalf("rules %v add %v", ruleIDs(p), p.AddLabels)
	}
	// A comment on the pull request judges its files too (the live issue
	// says it is a pull request, whatever the event).
	cin := in
	cin.Event = issues.Event{Name: "issue_comment", Action: "created", Number: 9}
	cin.Issue.IsPull = true
	if p := Decide(cin); !slices.Equal(ruleIDs(p), []string{RuleProtectedPath}) {
		t.Errorf("a comment on the pull request: rules %v, skipped %q", ruleIDs(p), p.Skipped)
	}
	// The agent labels its own pull request: it opens nothing.
	in.Issue.Labels = append(in.Issue.Labels, issues.Label{ID: 5, Name: "permission::evolve-system"})
	in.Config.BudgetAdmins = []string{"carol"}
	in.LabelEvents = []issues.LabelEvent{{Label: "permission::evolve-system", LabelID: 5, Added: true, Actor: "agent-bot"}}
	if p := Decide(in); !slices.Equal(ruleIDs(p), []string{RuleProtectedPath}) || !strings.Contains(p.Violations[0].Message, `added by "agent-bot", who is not in budget-admins`) {
		t.Errorf("evolve-system added by the agent: %v", p.Violations)
	}
	// An approver's label opens them.
	in.LabelEvents[0].Actor = "carol"
	if p := Decide(in); len(p.Violations) != 0 {
		t.Errorf("with evolve-system added by an approver: %v", ruleIDs(p))
	}
	in.PullFiles = []string{".kilocode/x", "docs/.kilo/y"}
	in.Issue.Labels = nil
	if p := Decide(in); len(p.Violations) != 0 {
		t.Errorf("paths that only look alike: %v", ruleIDs(p))
	}
}

// The guard's own files are protected by default; a pull request whose
// settings file does not load fails whatever its labels, and one whose
// file loads passes with an approver's permission::evolve-system.
func TestPullSettingsMustLoad(t *testing.T) {
	in := input(t, "a pull request", "size::small")
	in.Event = issues.Event{Name: "pull_request_target", Action: "synchronize", Number: 9, IsPull: true}
	in.PullFiles = []string{".gitea/gns-guard.yml"}
	in.Config.ProtectedPaths = []string{".kilo/", ".gitea/workflows/", ".gitea/gns-guard.yml"}
	in.Issue.Labels = append(in.Issue.Labels, issues.Label{ID: 5, Name: "permission::evolve-system"})
	in.Config.BudgetAdmins = []string{"carol"}
	in.LabelEvents = []issues.LabelEvent{{Label: "permission::evolve-system", LabelID: 5, Added: true, Actor: "carol"}}
	if p := Decide(in); len(p.Violations) != 0 {
		t.Fatalf("a settings change an approver opened, whose file loads: %v", ruleIDs(p))
	}
	in.PullSettings = `.gitea/gns-guard.yml:3:1: histroy-tail: unknown key (did you mean history-tail?)`
	p := Decide(in)
	if !slices.Equal(ruleIDs(p), []string{RuleSettingsInvalid}) || !strings.Contains(p.Violations[0].Message, in.PullSettings) || len(p.AddLabels) != 0 {
		t.Fatalf("a settings file that does not load: %v %v", p.Violations, p.AddLabels)
	}
	in.Issue.Labels, in.LabelEvents = nil, nil
	for _, f := range []string{".gitea/workflows/gns-guard.yml", ".gitea/gns-guard.yml"} {
		in.PullFiles, in.PullSettings = []string{f}, ""
		if p := Decide(in); !slices.Equal(ruleIDs(p), []string{RuleProtectedPath}) {
			t.Errorf("%s changed without permission::evolve-system: %v", f, ruleIDs(p))
		}
	}
}

func TestInvalidCheckpointRequestsRecoveryOnce(t *testing.T) {
	in := input(t, body("version: 2", "version: 3"), "cascade::depth-2", "cascade::depth-exceeded")
	p := Decide(in)
	if !slices.Equal(ruleIDs(p), []string{"checkpoint-invalid"}) || p.Recovery == "" || p.Prune != nil {
		t.Fatalf("rules %v recovery %q prune %v", ruleIDs(p), p.Recovery, p.Prune)
	}
	if !strings.HasPrefix(p.Recovery, "## 🔄 context-recovery-needed") || !strings.Contains(p.Recovery, issues.RecoveryMarker(9)) {
		t.Errorf("recovery comment: %s", p.Recovery)
	}
	if len(p.RemoveLabels) != 0 {
		t.Errorf("a label was removed on an unreadable checkpoint: %v", p.RemoveLabels)
	}
	in.Recent = []issues.Comment{{ID: 3, Author: issues.ActionsUser, Body: p.Recovery}}
	if p := Decide(in); p.Recovery != "" {
		t.Error("a second recovery comment was planned")
	}
	// A stranger's comment with the marker is not trusted.
	in.Recent = []issues.Comment{{ID: 3, Author: "mallory", Body: p.Recovery}}
	if p := Decide(in); p.Recovery == "" {
		t.Error("a forged marker suppressed the recovery comment")
	}
}

func TestPruneWhenOverBudget(t *testing.T) {
	hist := "  history:\n"
	for i := range 12 {
		hist += fmt.Sprintf("    - {agent: dev, action: step %d, invocation: inv-%d, timestamp: \"2026-05-16T13:%02d:00Z\"}\n", i, i, i)
	}
	b := body("consumed: 3000", "consumed: 8500", "remaining: 7000", "remaining: 1500",
		"  history_tail:\n    - {agent: orchestrator, action: planned, timestamp: \"2026-05-16T12:58:00Z\"}\n", hist,
		"next_estimated_tokens: 1500", "next_estimated_tokens: 500")
	p := Decide(input(t, b, "cascade::depth-2"))
	if p.Prune == nil {
		t.Fatalf("no prune planned; warnings %v", p.Warnings)
	}
	if p.Prune.Removed != 9 || len(p.Prune.Archives) != 1 || !strings.Contains(p.Prune.Body, "history_tail:") || !strings.Contains(p.Prune.Body, "total: 750") {
		t.Fatalf("prune: removed %d, archives %d, body:\n%s", p.Prune.Removed, len(p.Prune.Archives), p.Prune.Body)
	}
	if !strings.HasPrefix(p.Prune.Body, "# Issue nine\n\nSome text.\n\n```yaml\n") {
		t.Errorf("bytes outside the block changed")
	}
}

func TestDigestAfterFiveResults(t *testing.T) {
	in := input(t, body(), "cascade::depth-2")
	result := func(id int64) issues.Comment {
		return issues.Comment{ID: id, Author: "dev", HTMLURL: fmt.Sprintf("http://x/issues/9#issuecomment-%d", id), Body: fmt.Sprintf("## 🔄 dev | phase:build | depth:1\n\nr%d\n\n<!-- GNS_EVENT {\"agent\":\"dev\",\"invocation\":\"i%d\",\"event_type\":\"subagent_result\",\"phase\":\"build\",\"depth\":1,\"budget\":{\"before\":1,\"consumed\":1,\"remaining\":0},\"status\":\"done\",\"verdict\":\"pass\",\"files_changed\":[\"a.go\"],\"key_stats\":\"ok\",\"next_agent\":\"\"} -->", id, id)}
	}
	for id := int64(1); id <= 4; id++ {
		in.Recent = append(in.Recent, result(id))
	}
	if p := Decide(in); p.Digest != "" {
		t.Fatal("digest after 4 results")
	}
	in.Recent = append(in.Recent, result(5))
	p := Decide(in)
	if !strings.HasPrefix(p.Digest, "## GNS-2 Completion Digest") || strings.Count(p.Digest, "issuecomment-") != 5 || !strings.Contains(p.Digest, issues.DigestMarker(9)) {
		t.Fatalf("digest:\n%s", p.Digest)
	}
	in.Recent = append(in.Recent, issues.Comment{ID: 6, Author: issues.ActionsUser, Body: p.Digest}, result(7))
	if p := Decide(in); p.Digest != "" {
		t.Error("a digest was planned again right after one")
	}
}
