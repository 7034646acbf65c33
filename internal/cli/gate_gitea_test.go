package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/dashboard"
	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/meter"
	"github.com/gns-guard/gns-guard/internal/meterclient"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
	"github.com/gns-guard/gns-guard/internal/testkit/mcpclient"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// gatedFlow is an issue in the gated posture on the real server: the
// agent reads only, the gate account writes, and the meter serves the
// gate with the gate account's token.
type gatedFlow struct {
	*flow
	reader, gate actiontest.User
	rm           *runningMeter
}

func newGatedFlow(t testing.TB) *gatedFlow {
	t.Helper()
	g := &gatedFlow{flow: newFlow(t, 30000, "cascade::depth-3", "size::medium")}
	g.reader = g.r.User(t, "agent", giteatest.PermRead)
	g.gate = g.r.User(t, "gate", giteatest.PermWrite)
	g.rm = startMeter(t, g.r, filepath.Join(t.TempDir(), "meter.db"), nil, func(o *meter.Options) {
		o.Gate = &meter.GateOptions{Token: g.gate.Token, Connect: forge.Connect}
	})
	g.r.CommitFile(t, ".gitea/gns-guard.yml", meterConfig(g.rm, "gate-account: "+g.gate.Login, "agents:",
		"  lead-developer: "+g.reader.Login, "  code-reviewer: "+g.reader.Login, "  tester: "+g.reader.Login))
	return g
}

// as runs a verb as the read-only agent.
func (g *gatedFlow) as(t testing.TB, verb string, args ...string) (string, string, int) {
	t.Helper()
	base := []string{verb, "--repo", g.r.Owner + "/" + g.r.Name, "--issue", strconv.FormatInt(g.n, 10),
		"--server", g.r.S.URL, "--token", g.reader.Token, "--guard-user", g.r.Bot}
	return gns(t, nil, append(base, args...)...)
}

// spawn opens an invocation as the agent; the test fails if refused.
func (g *gatedFlow) spawn(t testing.TB, parent, agent string, estimate int) meterclient.GateSpawned {
	t.Helper()
	out, errOut, code := g.as(t, "spawn", "--parent", parent, "--agent", agent, "--estimate", strconv.Itoa(estimate), "--format", "json")
	var sp meterclient.GateSpawned
	if code != 0 || json.Unmarshal([]byte(out), &sp) != nil {
		t.Fatalf("spawn %s under %q: exit %d\n%s\n%s\n%s", agent, parent, code, out, errOut, g.rm.log)
	}
	return sp
}

// TestGatedJourneyOnGitea: the honest journey in the gated posture. An
// agent that can only read opens a root, a sub-agent and a sub-sub-agent
// through the gate, spends in each through the meter, and reports; the
// gate writes the result as its account, with the cascade log, and every
// run of the guard on it passes. A spawn past the cascade limit and one
// over half of what remains are refused, a call in an invocation the gate
// never opened is refused, and the agent's own token cannot edit the
// issue.
func TestGatedJourneyOnGitea(t *testing.T) {
	t.Parallel()
	g := newGatedFlow(t)
	root := g.spawn(t, "", "lead-developer", 8000)
	child := g.spawn(t, root.Invocation, "code-reviewer", 3000)
	grandchild := g.spawn(t, child.Invocation, "tester", 1000)
	if root.Depth != 1 || child.Depth != 2 || grandchild.Depth != 3 {
		t.Fatalf("depths %d, %d, %d; want 1, 2, 3", root.Depth, child.Depth, grandchild.Depth)
	}
	for name, tc := range map[string]struct {
		parent, agent, estimate, rule string
	}{
		"past the cascade limit":    {grandchild.Invocation, "tester", "100", "depth-exceeded"},
		"over half of what remains": {root.Invocation, "tester", "20000", "next-over-budget"},
	} {
		if _, errOut, code := g.as(t, "spawn", "--parent", tc.parent, "--agent", tc.agent, "--estimate", tc.estimate); code != 1 ||
			!strings.Contains(errOut, tc.rule) {
			t.Errorf("%s: exit %d %s", name, code, errOut)
		}
	}
	g.rm.prov.Output.Store(300)
	for _, inv := range []string{root.Invocation, child.Invocation, grandchild.Invocation} {
		if status, body := g.rm.chat(t, g.r, g.reader.Token, g.n, inv, 400, false); status != 200 {
			t.Fatalf("a call in %s: %d %s\n%s", inv, status, body, g.rm.log)
		}
	}
	if status, body := g.rm.chat(t, g.r, g.reader.Token, g.n, "run-of-its-own", 400, false); status != 403 || !strings.Contains(body, "gate-unopened") {
		t.Errorf("a call in an invocation the gate never opened: %d %s", status, body)
	}
	if err := actiontest.API(t.Context(), g.r.S, g.reader.Token, http.MethodPatch, g.r.Path("/issues/%d", g.n),
		map[string]any{"body": "rewritten"}, nil); err == nil {
		t.Error("the read-only agent edited the issue's body")
	}

	out, errOut, code := g.as(t, "report", "--agent", "lead-developer", "--invocation", root.Invocation, "--consumed", "2000",
		"--action", "wired the limiter, reviewed and tested", "--next-agent", "code-reviewer", "--next-estimate", "1500", "--format", "json")
	var res reportJSON
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Outcome != "written" {
		t.Fatalf("the report through the gate: exit %d\n%s\n%s\n%s", code, out, errOut, g.rm.log)
	}
	var c actiontest.Comment
	for _, x := range g.r.Comments(t, g.n) {
		if x.ID == res.CommentID {
			c = x
		}
	}
	if c.User.Login != g.gate.Login || !strings.Contains(c.Body, "`"+g.reader.Login+"`, through the gate") ||
		!strings.Contains(c.Body, grandchild.Invocation) {
		t.Errorf("the result by %s:\n%s", c.User.Login, c.Body)
	}
	runs := g.guard(t)
	if len(runs) == 0 {
		t.Fatal("the gate's writes recorded no run of the guard")
	}
	for _, run := range runs {
		if run.Code != 0 {
			t.Errorf("a guard run on the gate's writes failed: %s", run)
		}
	}
}

// TestGatedMCPOnGitea: the official MCP client, over streamable HTTP with
// the read-only agent's token, opens a root through the gate's spawn
// tool, is refused a sub-agent past the cascade limit, reads the entry
// load, and reports; the gate writes the result as its account.
func TestGatedMCPOnGitea(t *testing.T) {
	t.Parallel()
	g := newGatedFlow(t)
	where := map[string]any{"repo": g.r.Owner + "/" + g.r.Name, "issue": g.n}
	with := func(more map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range where {
			out[k] = v
		}
		for k, v := range more {
			out[k] = v
		}
		return out
	}
	plan := func(calls ...mcpclient.Call) mcpclient.Transcript {
		return mcpclient.Run(t, mcpclient.Plan{URL: g.rm.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer " + g.reader.Token}, Calls: calls})
	}
	tr := plan(mcpclient.Call{Name: "spawn", Arguments: with(map[string]any{"agent": "lead-developer", "estimate": 4000})},
		mcpclient.Call{Name: "context", Arguments: where})
	if len(tr.Tools) != 4 || len(tr.Calls) != 2 || tr.Calls[0].Result == nil || tr.Calls[0].Result.IsError {
		t.Fatalf("the gate's MCP server: %s", tr.Raw)
	}
	root, _ := tr.Calls[0].Result.StructuredContent["invocation"].(string)
	if !strings.HasPrefix(root, "gate-") {
		t.Fatalf("spawn answered no invocation: %s", tr.Raw)
	}
	if r := tr.Calls[1].Result; r == nil || r.IsError || !strings.Contains(r.Text(), "wire the limiter into the gateway config") {
		t.Errorf("context: %s", tr.Raw)
	}
	parent := root
	for range 2 {
		tr = plan(mcpclient.Call{Name: "spawn", Arguments: with(map[string]any{"parent": parent, "agent": "tester", "estimate": 100})})
		parent, _ = tr.Calls[0].Result.StructuredContent["invocation"].(string)
	}
	tr = plan(mcpclient.Call{Name: "spawn", Arguments: with(map[string]any{"parent": parent, "agent": "tester", "estimate": 10})},
		mcpclient.Call{Name: "report", Arguments: with(map[string]any{"agent": "lead-developer", "invocation": root, "consumed": 100,
			"action": "wired the limiter", "status": "ok", "next_agent": "code-reviewer", "next_estimated_tokens": 1500})})
	if r := tr.Calls[0].Result; r == nil || !r.IsError || !strings.Contains(r.Text(), "depth-exceeded") {
		t.Errorf("a spawn past the cascade limit: %s", tr.Raw)
	}
	if r := tr.Calls[1].Result; r == nil || r.IsError || !strings.Contains(r.Text(), `"outcome":"written"`) {
		t.Fatalf("report: %s\n%s", tr.Raw, g.rm.log)
	}
	cs := g.r.Comments(t, g.n)
	if last := cs[len(cs)-1]; last.User.Login != g.gate.Login || !strings.Contains(last.Body, "`"+g.reader.Login+"`, through the gate") {
		t.Errorf("the result by %s:\n%s", last.User.Login, last.Body)
	}
	tr = plan(mcpclient.Call{Name: "subissue", Arguments: with(map[string]any{"invocation": root, "agent": "tester", "title": "limiter tests",
		"task": "Write the limiter's tests.", "budget": 4000, "estimate": 1500})},
		mcpclient.Call{Name: "subissue", Arguments: with(map[string]any{"invocation": root, "agent": "tester", "title": "too big",
			"task": "Everything.", "budget": 29000, "estimate": 1500})})
	sub, _ := tr.Calls[0].Result.StructuredContent["issue"].(float64)
	if r := tr.Calls[1].Result; sub == 0 || r == nil || !r.IsError || !strings.Contains(r.Text(), "next-over-budget") {
		t.Fatalf("sub-issues: %s\n%s", tr.Raw, g.rm.log)
	}
	opened := g.r.Issue(t, int64(sub))
	if !strings.Contains(opened.Body, "by invocation "+root) || !strings.Contains(opened.Body, "depth: 2") {
		t.Errorf("the sub-issue's body:\n%s", opened.Body)
	}
	for _, run := range g.guard(t) {
		if run.Code != 0 {
			t.Errorf("a guard run on the gate's writes failed: %s", run)
		}
	}
}

// TestGatedStatusShowsTheTreeOnGitea: in the gated posture `status`
// shows the issue's invocations from the meter, read with status's own
// token (here the read-only agent's): the root, and its sub-agent
// indented under it with what the meter charged for its call. With the
// meter down it says so on the issue's line and still lists the issue.
func TestGatedStatusShowsTheTreeOnGitea(t *testing.T) {
	t.Parallel()
	g := newGatedFlow(t)
	root := g.spawn(t, "", "lead-developer", 8000)
	child := g.spawn(t, root.Invocation, "code-reviewer", 3000)
	g.rm.prov.Output.Store(300)
	if status, body := g.rm.chat(t, g.r, g.reader.Token, g.n, child.Invocation, 400, false); status != 200 {
		t.Fatalf("a call in the sub-agent: %d %s\n%s", status, body, g.rm.log)
	}
	tree, err := meterclient.Client{Base: g.rm.URL, Token: g.reader.Token}.Tree(t.Context(), g.r.Owner+"/"+g.r.Name, g.n)
	if err != nil || len(tree.Invocations) != 2 || tree.Invocations[1].Tokens == 0 || tree.Invocations[1].Calls != 1 {
		t.Fatalf("the meter's tree: %v %+v", err, tree)
	}
	charged := tree.Invocations[1].Tokens

	out, errOut, code := status(t, g.r, g.r.S.URL, g.reader.Token)
	t.Logf("status, exit %d:\n%s", code, out)
	line := func(inv string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, inv) {
				return l
			}
		}
		t.Fatalf("status does not show %s: exit %d\n%s\n%s", inv, code, out, errOut)
		return ""
	}
	rootLine, childLine := line(root.Invocation), line(child.Invocation)
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	if !strings.Contains(out, fmt.Sprintf("#%d:\n%s", g.n, rootLine)) || indent(childLine) <= indent(rootLine) {
		t.Errorf("the sub-agent is not under its root:\n%s", out)
	}
	for l, want := range map[string][]string{
		rootLine:  {"lead-developer", "as " + g.reader.Login, "depth 1", "estimate 8,000", "charged nothing yet"},
		childLine: {"code-reviewer", "as " + g.reader.Login, "depth 2", "estimate 3,000", "charged " + tokens.Format(charged) + " tokens in 1 call"},
	} {
		for _, w := range want {
			if !strings.Contains(l, w) {
				t.Errorf("%q lacks %q", l, w)
			}
		}
	}

	js, _, _ := status(t, g.r, g.r.S.URL, g.reader.Token, "--format", "json")
	var rows []struct {
		Gate *dashboard.Gate `json:"gate"`
	}
	if err := json.Unmarshal([]byte(js), &rows); err != nil || len(rows) != 1 || rows[0].Gate == nil || len(rows[0].Gate.Invocations) != 2 ||
		rows[0].Gate.Invocations[1].Parent != root.Invocation || rows[0].Gate.Invocations[1].Tokens != charged {
		t.Errorf("status --format json: %v\n%s", err, js)
	}
	md, _, _ := status(t, g.r, g.r.S.URL, g.reader.Token, "--format", "markdown")
	if !strings.Contains(md, "  - lead-developer as "+g.reader.Login+", "+root.Invocation) ||
		!strings.Contains(md, "    - code-reviewer as "+g.reader.Login+", "+child.Invocation) {
		t.Errorf("status --format markdown:\n%s", md)
	}

	g.rm.stop()
	down, errDown, codeDown := status(t, g.r, g.r.S.URL, g.reader.Token)
	if codeDown != code || !strings.Contains(down, fmt.Sprintf("#%d: the meter could not be read: could not reach the meter", g.n)) ||
		!strings.Contains(down, fmt.Sprintf("#%d ", g.n)) {
		t.Errorf("with the meter down: exit %d (was %d)\n%s\n%s", codeDown, code, down, errDown)
	}
}

// TestGatedSpawnToolOnGitea: `gns-guard mcp` (the built binary, driven by
// the official TypeScript client) serves spawn. Run with the read-only
// agent's token, it opens a sub-agent under the agent's root through the
// gate, is refused one over half of what remains (an error result naming
// the rule), and its status tool then shows both invocations.
func TestGatedSpawnToolOnGitea(t *testing.T) {
	t.Parallel()
	g := newGatedFlow(t)
	root := g.spawn(t, "", "lead-developer", 8000)
	on := func(args map[string]any) map[string]any {
		args["issue"], args["guard_user"] = g.n, g.r.Bot
		return args
	}
	tr := mcpclient.Run(t, mcpclient.Plan{
		Command: actiontest.Binary(t),
		Args:    []string{"mcp", "--server", g.r.S.URL, "--repo", g.r.Owner + "/" + g.r.Name},
		Env:     map[string]string{"GITEA_TOKEN": g.reader.Token, "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")},
		Calls: []mcpclient.Call{
			{Name: "spawn", Arguments: on(map[string]any{"parent": root.Invocation, "agent": "code-reviewer", "estimate": 3000})},
			{Name: "spawn", Arguments: on(map[string]any{"parent": root.Invocation, "agent": "tester", "estimate": 20000})},
			{Name: "status", Arguments: map[string]any{"guard_user": g.r.Bot}},
		},
	})
	if len(tr.Calls) != 3 {
		t.Fatalf("%d calls answered, want 3\n%s", len(tr.Calls), strings.Join(tr.Stderr, "\n"))
	}
	for i, c := range tr.Calls {
		t.Logf("call %d: %s", i, c)
	}
	opened := tr.Calls[0].Result
	if opened == nil || opened.IsError || opened.StructuredContent["parent"] != root.Invocation || opened.StructuredContent["depth"] != 2.0 {
		t.Fatalf("the spawn tool: %s\n%s", tr.Calls[0], g.rm.log)
	}
	if refused := tr.Calls[1].Result; refused == nil || !refused.IsError || !strings.Contains(refused.Text(), "next-over-budget") {
		t.Errorf("a spawn over half of what remains: %s", tr.Calls[1])
	}
	st := tr.Calls[2].Result
	if st == nil || !strings.Contains(st.Text(), `"invocation": "`+root.Invocation+`"`) ||
		!strings.Contains(st.Text(), `"invocation": "`+opened.StructuredContent["invocation"].(string)+`"`) {
		t.Errorf("the status tool does not show the tree: %s", tr.Calls[2])
	}
}
