package meter

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/meterclient"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/receipt"
)

const gateToken = "gitea-token-of-the-gate"

// gatedRig is a meter serving the gate for acme/app in the gated
// posture: coder holds read access and is mapped to three agents;
// gns-gate writes.
func gatedRig(t *testing.T) *rig {
	t.Helper()
	var r *rig
	r = newRig(t, func(o *Options) {
		o.Gate = &GateOptions{Token: gateToken, Connect: func(_, token, _, _ string) (port.Forge, error) { return r.gitea.Dial(token), nil }}
	})
	r.gitea.Token(gateToken, "gns-gate")
	r.gitea.Grant("gns-gate", "write")
	r.gitea.Grant("coder", "read")
	settings := "gate-account: gns-gate\nmeter-public-key: " + r.key.Public() + "\n" +
		"agents:\n  code-reviewer: coder\n  tester: coder\n  linter: coder\n"
	if _, err := r.gitea.As("acme").CommitFiles(context.Background(), port.Commit{Files: []port.FileChange{
		{Path: ".gitea/gns-guard.yml", Content: []byte(settings)},
		{Path: ".kilo/agents/code-reviewer.md", Content: []byte("---\nallowed_subagents: [tester]\n---\nYou review.\n")}}}); err != nil {
		t.Fatal(err)
	}
	judge(t, r.gitea, 7)
	return r
}

// spawnAt asks the gate for an invocation; it answers status and the
// answer's text.
func spawnAt(t *testing.T, r *rig, token string, sp meterclient.GateSpawn) (int, meterclient.GateSpawned, string) {
	t.Helper()
	data, _ := json.Marshal(sp)
	resp, text := post(t, r.srv.URL+"/acme/app/issues/7/gate/spawn", token, string(data))
	var out meterclient.GateSpawned
	_ = json.Unmarshal([]byte(text), &out)
	return resp.StatusCode, out, text
}

// TestGateSpawns: the gate opens a root for the caller's own agent at the
// checkpoint's depth and sub-agents one level down, and refuses one past
// the cascade limit, one the parent's definition does not allow, one
// over half of what remains, and any for an account agents does not map.
func TestGateSpawns(t *testing.T) {
	r := gatedRig(t)
	status, root, text := spawnAt(t, r, agentToken1, meterclient.GateSpawn{Agent: "code-reviewer", Estimate: 3500})
	if status != 201 || root.Depth != 1 || root.Login != "coder" || !strings.HasPrefix(root.Invocation, "gate-") {
		t.Fatalf("the root: %d %s", status, text)
	}
	status, child, text := spawnAt(t, r, agentToken1, meterclient.GateSpawn{Parent: root.Invocation, Agent: "tester", Estimate: 2000})
	if status != 201 || child.Depth != 2 || !strings.Contains(child.BaseURLs["openai"], "/invocations/"+child.Invocation+"/openai/v1") {
		t.Fatalf("the child: %d %s", status, text)
	}
	for name, tc := range map[string]struct {
		token string
		sp    meterclient.GateSpawn
		want  string
	}{
		"past the cascade limit":    {agentToken1, meterclient.GateSpawn{Parent: child.Invocation, Agent: "linter", Estimate: 10}, "depth-exceeded"},
		"not the parent's":          {agentToken1, meterclient.GateSpawn{Parent: root.Invocation, Agent: "linter", Estimate: 10}, "agent-not-allowed"},
		"over half of what is left": {agentToken1, meterclient.GateSpawn{Parent: root.Invocation, Agent: "tester", Estimate: 6901}, "next-over-budget"},
		"an unopened parent":        {agentToken1, meterclient.GateSpawn{Parent: "gate-forged", Agent: "tester", Estimate: 10}, "gate-unopened"},
		"an unmapped account":       {"reader-token", meterclient.GateSpawn{Agent: "code-reviewer", Estimate: 10}, "meter-auth"},
		"another agent's root":      {agentToken1, meterclient.GateSpawn{Agent: "orchestrator", Estimate: 10}, "agent-impersonated"},
	} {
		if status, _, text := spawnAt(t, r, tc.token, tc.sp); status/100 != 4 || !strings.Contains(text, `"rule":"`+tc.want+`"`) {
			t.Errorf("%s: %d %s; want a refusal %s", name, status, text, tc.want)
		}
	}
}

// TestGateReports: a report through the gate is judged and written by the
// gate's account, naming the agent's login in its header and carrying
// the meter's signature of it, the receipt and the cascade log; a report
// of an invocation the gate never opened, or under what the tree spent,
// writes nothing.
func TestGateReports(t *testing.T) {
	r := gatedRig(t)
	_, root, _ := spawnAt(t, r, agentToken1, meterclient.GateSpawn{Agent: "code-reviewer", Estimate: 3500})
	_, child, _ := spawnAt(t, r, agentToken1, meterclient.GateSpawn{Parent: root.Invocation, Agent: "tester", Estimate: 2000})
	before := len(r.gitea.Comments(7))
	report := func(inv string, consumed int64) (int, string) {
		data, _ := json.Marshal(meterclient.GateReport{Agent: "code-reviewer", Invocation: inv, Consumed: consumed, Action: "reviewed the limiter",
			Status: "ok", NextAgent: "lead-developer", NextEstimate: 2000})
		resp, text := post(t, r.srv.URL+"/acme/app/issues/7/gate/report", agentToken1, string(data))
		return resp.StatusCode, text
	}
	if status, text := report("gate-forged", 800); status != 403 || !strings.Contains(text, "gate-unopened") {
		t.Fatalf("an unopened invocation: %d %s", status, text)
	}
	if len(r.gitea.Comments(7)) != before {
		t.Fatal("a refused report wrote a comment")
	}
	status, text := report(root.Invocation, 800)
	if status != 200 || !strings.Contains(text, `"outcome":"written"`) {
		t.Fatalf("the report: %d %s", status, text)
	}
	cs := r.gitea.Comments(7)
	c := cs[len(cs)-1]
	a, err := receipt.VerifyAttestation(c.Body, r.key.Public(), "acme/app", 7)
	switch {
	case c.Author != "gns-gate":
		t.Errorf("the result's author is %s, want the gate's account", c.Author)
	case err != nil || a.Login != "coder" || a.Agent != "code-reviewer":
		t.Errorf("the meter's word: %+v, %v", a, err)
	case !strings.Contains(c.Body, "**Written by**: `coder`, through the gate"):
		t.Errorf("the header does not name the login:\n%s", c.Body)
	case !strings.Contains(c.Body, "### Cascade Log") || !strings.Contains(c.Body, child.Invocation):
		t.Errorf("no cascade log of the child:\n%s", c.Body)
	}
}

// TestGateSubIssues: a sub-issue is opened by the gate's account under an
// invocation the caller holds, with its checkpoint one level deeper and
// the parent's cascade label; one over half of what remains, one past the
// cascade limit, or one whose task carries the agent's token writes
// nothing.
func TestGateSubIssues(t *testing.T) {
	r := gatedRig(t)
	_, root, _ := spawnAt(t, r, agentToken1, meterclient.GateSpawn{Agent: "code-reviewer", Estimate: 3500})
	_, child, _ := spawnAt(t, r, agentToken1, meterclient.GateSpawn{Parent: root.Invocation, Agent: "tester", Estimate: 100})
	ask := func(req meterclient.GateSubIssue) (int, string) {
		data, _ := json.Marshal(req)
		resp, text := post(t, r.srv.URL+"/acme/app/issues/7/gate/subissue", agentToken1, string(data))
		return resp.StatusCode, text
	}
	status, text := ask(meterclient.GateSubIssue{Invocation: root.Invocation, Agent: "tester", Title: "tests", Task: "Test the limiter.",
		Budget: 4000, Estimate: 1500})
	var out meterclient.GateSubIssued
	if status != 201 || json.Unmarshal([]byte(text), &out) != nil || out.Depth != 2 {
		t.Fatalf("the sub-issue: %d %s", status, text)
	}
	opened := r.gitea.Issue(out.Issue)
	if !strings.Contains(opened.Body, "Opened through the gate for `coder` by invocation "+root.Invocation) ||
		!slices.Contains(opened.LabelNames(), "cascade::depth-2") {
		t.Errorf("sub-issue #%d: labels %v\n%s", out.Issue, opened.LabelNames(), opened.Body)
	}
	for name, tc := range map[string]struct {
		req  meterclient.GateSubIssue
		want string
	}{
		"over half":      {meterclient.GateSubIssue{Invocation: root.Invocation, Agent: "tester", Title: "t", Task: "x", Budget: 6901}, "next-over-budget"},
		"past the limit": {meterclient.GateSubIssue{Invocation: child.Invocation, Agent: "tester", Title: "t", Task: "x", Budget: 10}, "depth-exceeded"},
		"a token":        {meterclient.GateSubIssue{Invocation: root.Invocation, Agent: "tester", Title: "t", Task: "use " + agentToken1, Budget: 10}, "the agent's token"},
		"unopened":       {meterclient.GateSubIssue{Invocation: "gate-forged", Agent: "tester", Title: "t", Task: "x", Budget: 10}, "gate-unopened"},
	} {
		if status, text := ask(tc.req); status/100 != 4 || !strings.Contains(text, tc.want) || strings.Contains(text, agentToken1) {
			t.Errorf("%s: %d %s", name, status, text)
		}
	}
	if next := r.gitea.Issue(out.Issue + 1); next.Number != 0 {
		t.Errorf("a refused sub-issue was opened: #%d", next.Number)
	}
}
