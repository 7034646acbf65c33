package metering

import (
	"strings"
	"testing"
)

// TestJudgeSpawn: the gate opens a sub-agent one level below its parent,
// within the cascade limit, allowed, and for at most half of what
// remains after metered spend; a root may take all that remains.
func TestJudgeSpawn(t *testing.T) {
	st := Standing{Total: 10000, Consumed: 2000, Remaining: 8000, Depth: 0, MaxDepth: 2, MaxDepthKnown: true}
	pending := Pending{Tokens: 1000} // 7000 remain after it
	for _, tc := range []struct {
		name      string
		st        Standing
		sp        Spawn
		wantDepth int64
		wantRule  string
		wantText  string
	}{
		{name: "root at the checkpoint's depth", st: st, sp: Spawn{Root: true, Agent: "orchestrator", Estimate: 7000}, wantDepth: 0},
		{name: "root over all that remains", st: st, sp: Spawn{Root: true, Agent: "orchestrator", Estimate: 7001},
			wantRule: RuleNextOverBudget, wantText: "over all of what remains (7000 of 10000, after 1000 metered"},
		{name: "child one level down", st: st, sp: Spawn{ParentDepth: 1, Agent: "coder", Estimate: 3500}, wantDepth: 2},
		{name: "child past the limit", st: st, sp: Spawn{ParentDepth: 2, Agent: "coder", Estimate: 10},
			wantDepth: 3, wantRule: RuleDepthExceeded, wantText: "depth 3 passes the cascade limit 2"},
		{name: "unlimited", st: Standing{Remaining: 1100, MaxDepth: -1, MaxDepthKnown: true}, sp: Spawn{ParentDepth: 9, Agent: "a", Estimate: 50}, wantDepth: 10},
		{name: "child over half", st: st, sp: Spawn{ParentDepth: 0, Agent: "coder", Estimate: 3501},
			wantDepth: 1, wantRule: RuleNextOverBudget, wantText: "over half of what remains"},
		{name: "not in allowed-agents", st: st, sp: Spawn{Agent: "intruder", Allowed: []string{"coder"}},
			wantDepth: 1, wantRule: RuleAgentNotAllowed, wantText: "not in allowed-agents"},
		{name: "not the parent's sub-agent", st: st, sp: Spawn{Agent: "deployer", Subagents: []string{"coder", "tester"}},
			wantDepth: 1, wantRule: RuleAgentNotAllowed, wantText: "allows the sub-agents [coder tester], not \"deployer\""},
		{name: "refused state", st: Standing{Refusal: &Refusal{Rule: "budget-exhausted"}}, sp: Spawn{Agent: "coder"}, wantRule: "budget-exhausted"},
	} {
		depth, ref := JudgeSpawn(tc.st, pending, tc.sp)
		rule, msg := "", ""
		if ref != nil {
			rule, msg = ref.Rule, ref.Message
		}
		if rule != tc.wantRule || !strings.Contains(msg, tc.wantText) || tc.wantRule != "budget-exhausted" && depth != tc.wantDepth {
			t.Errorf("%s: depth %d, refusal %s %q; want depth %d, %s %q", tc.name, depth, rule, msg, tc.wantDepth, tc.wantRule, tc.wantText)
		}
	}
}

// TestAllowedSubagents: the definition's front matter lists them; none
// listed is no restriction, and an empty list allows none.
func TestAllowedSubagents(t *testing.T) {
	for text, want := range map[string][]string{
		"---\nname: orchestrator\nallowed_subagents: [coder, tester]\n---\nYou orchestrate.\n": {"coder", "tester"},
		"---\nallowed_subagents: []\n---\n":                                                    {},
		"---\nname: coder\n---\n":                                                              nil,
		"# no front matter\n":                                                                  nil,
	} {
		got, err := AllowedSubagents([]byte(text))
		if err != nil || (got == nil) != (want == nil) || strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%q: %v, %v; want %v", text, got, err, want)
		}
	}
	if _, err := AllowedSubagents([]byte("---\nallowed_subagents: [a\n")); err == nil {
		t.Error("an unclosed front matter is not an error")
	}
}
