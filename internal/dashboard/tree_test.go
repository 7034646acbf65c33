package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/meterclient"
	"github.com/gns-guard/gns-guard/internal/testkit/golden"
)

// gatedSample is sample() in the gated posture: #14 has two roots, one
// with a sub-agent and a sub-sub-agent; #12's agents have hostile names;
// the meter did not answer for #9; #7 and #3 have no invocation yet.
func gatedSample() *Result {
	r := sample()
	at := time.Date(2026, 5, 16, 12, 0, 0, 0, time.UTC)
	br := func(inv, parent, agent, login string, depth, estimate, tokens, calls, cost int64) meterclient.Branch {
		return meterclient.Branch{Invocation: inv, Parent: parent, Agent: agent, Login: login, Depth: depth, Estimate: estimate,
			Opened: at, Tokens: tokens, Calls: calls, Cost: cost}
	}
	// Oldest first, as the meter answers: the second root opens before
	// the first root's sub-sub-agent.
	r.Rows[0].Gate = &Gate{Invocations: []meterclient.Branch{
		br("gate-000000000001", "", "lead-developer", "alice", 1, 8000, 1234, 2, 12340),
		br("gate-000000000002", "gate-000000000001", "code-reviewer", "alice", 2, 3000, 412, 1, 0),
		br("gate-000000000003", "", "tester", "bob", 1, 2000, 0, 0, 0),
		br("gate-000000000004", "gate-000000000002", "tester", "alice", 3, 1000, 96, 1, 960),
	}}
	inflight := br("gate-00000000000b", "gate-00000000000a", "tester|x", "@carol", 4, 500, 700, 1, 0)
	inflight.InFlight = 1
	r.Rows[1].Gate = &Gate{Invocations: []meterclient.Branch{
		br("gate-00000000000a", "", "@bob`", "mallory", 3, 1200, 0, 0, 0), inflight}}
	r.Rows[2].Gate = &Gate{Invocations: []meterclient.Branch{}, Error: "the meter answered HTTP 503: store down"}
	r.Rows[3].Gate = &Gate{Invocations: []meterclient.Branch{}}
	r.Rows[4].Gate = &Gate{Invocations: []meterclient.Branch{}}
	return r
}

// TestGateTreesGolden: with the trees filled, the text, Markdown, JSON
// and dashboard forms show them after the table.
func TestGateTreesGolden(t *testing.T) {
	r := gatedSample()
	js, err := JSON(r)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "gated.json"), string(js), rerun)
	golden.Check(t, filepath.Join("testdata", "gated.txt"), Text(r), rerun)
	golden.Check(t, filepath.Join("testdata", "gated.md"), Markdown(r), rerun)
	golden.Check(t, filepath.Join("testdata", "gated-dashboard.md"), Body(r, "v1.2.3"), rerun)
}

// TestGateTreeIndentsByLevel: each sub-agent's line follows its parent's,
// indented one step more; the text names the agent, login, estimate and
// what the meter charged.
func TestGateTreeIndentsByLevel(t *testing.T) {
	text := Text(gatedSample())
	indent := map[string]int{}
	var order []string
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if !strings.HasPrefix(trimmed, "gate-") && strings.Contains(line, "gate-0000") {
			for _, f := range strings.Fields(line) {
				if strings.HasPrefix(f, "gate-") {
					indent[f] = len(line) - len(trimmed)
					order = append(order, f)
				}
			}
		}
	}
	want := []string{"gate-000000000001", "gate-000000000002", "gate-000000000004", "gate-000000000003", "gate-00000000000a", "gate-00000000000b"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Fatalf("order %v, want %v:\n%s", order, want, text)
	}
	for inv, level := range map[string]int{"gate-000000000001": 2, "gate-000000000002": 4, "gate-000000000004": 6, "gate-000000000003": 2,
		"gate-00000000000a": 2, "gate-00000000000b": 4} {
		if indent[inv] != level {
			t.Errorf("%s is indented %d, want %d:\n%s", inv, indent[inv], level, text)
		}
	}
	for _, s := range []string{"lead-developer   as alice  gate-000000000001", "estimate 8,000", "charged 1,234 tokens in 2 calls ($0.0123)",
		"charged 412 tokens in 1 call\n", "charged nothing yet", "700 tokens in 1 call, 1 in flight",
		"#9: the meter could not be read: the meter answered HTTP 503: store down\n", "#7: none opened\n"} {
		if !strings.Contains(text, s) {
			t.Errorf("the text lacks %q:\n%s", s, text)
		}
	}
}

// TestGateTreeOrphanIsARoot: a parent the meter did not list makes its
// child a root, and a loop cannot hang the walk.
func TestGateTreeOrphanIsARoot(t *testing.T) {
	got := treeOrder([]meterclient.Branch{
		{Invocation: "a", Parent: "gone"}, {Invocation: "b", Parent: "a"}, {Invocation: "c", Parent: "c"}})
	var s []string
	for _, l := range got {
		s = append(s, fmt.Sprintf("%s:%d", l.b.Invocation, l.level))
	}
	if strings.Join(s, " ") != "a:0 b:1 c:0" {
		t.Errorf("%v", s)
	}
}

// TestGateMarkdownKeepsUntrustedTextInert: agent names and logins in the
// trees mention no one and break no list or table.
func TestGateMarkdownKeepsUntrustedTextInert(t *testing.T) {
	for name, md := range map[string]string{"status": Markdown(gatedSample()), "dashboard": Body(gatedSample(), "v1")} {
		_, trees, ok := strings.Cut(md, "**"+gateTitle+"**")
		if !ok {
			t.Fatalf("%s: no trees:\n%s", name, md)
		}
		for _, bad := range []string{"@bob", "@carol", "`@", "tester|x"} {
			if strings.Contains(trees, bad) {
				t.Errorf("%s: the trees hold %q:\n%s", name, bad, trees)
			}
		}
		for _, l := range strings.Split(strings.TrimSpace(trees), "\n") {
			if !strings.HasPrefix(strings.TrimLeft(l, " "), "- ") && !strings.HasPrefix(l, "### ") && l != "" {
				if name == "dashboard" {
					break // the burn chart follows
				}
				t.Errorf("%s: a line outside the list: %q", name, l)
			}
		}
	}
}

// TestUngatedShowsNoTree: without trees the forms are what they were
// (the goldens of TestRenderGolden), and JSON has no "gate".
func TestUngatedShowsNoTree(t *testing.T) {
	r := sample()
	js, _ := JSON(r)
	for name, s := range map[string]string{"text": Text(r), "markdown": Markdown(r), "body": Body(r, "v1"), "json": string(js)} {
		if strings.Contains(s, gateTitle) || strings.Contains(s, `"gate"`) {
			t.Errorf("%s shows a tree:\n%s", name, s)
		}
	}
}

// TestBodyBoundsTheTrees: trees too long for the dashboard give way to a
// line that says where they are.
func TestBodyBoundsTheTrees(t *testing.T) {
	r := gatedSample()
	var many []meterclient.Branch
	for i := range 2000 {
		many = append(many, meterclient.Branch{Invocation: fmt.Sprintf("gate-%012d", i), Agent: "tester", Login: "alice", Depth: 1})
	}
	r.Rows[0].Gate = &Gate{Invocations: many}
	body := Body(r, "v1")
	if len(body) > MaxBody || !strings.Contains(body, "The gate's invocations are not shown here") || !strings.Contains(body, "`#14`") {
		t.Errorf("%d bytes:\n%.2000s", len(body), body)
	}
}

// TestFillTrees: in the gated posture every row gets the meter's tree or
// why it has none; ungated, the meter is not asked; an unreachable meter
// is asked once.
func TestFillTrees(t *testing.T) {
	var asked atomic.Int64
	meter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/acme/agents/issues/14/invocations":
			_ = json.NewEncoder(w).Encode(meterclient.Tree{Repo: "acme/agents", Issue: 14, Invocations: []meterclient.Branch{
				{Invocation: "gate-1", Agent: "lead-developer", Login: "alice", Depth: 1, Estimate: 8000, Tokens: 10, Calls: 1}}})
		case "/acme/agents/issues/12/invocations":
			http.Error(w, `{"error":{"rule":"meter-store"}}`, http.StatusServiceUnavailable)
		default:
			_ = json.NewEncoder(w).Encode(meterclient.Tree{Invocations: []meterclient.Branch{}})
		}
	}))
	defer meter.Close()
	cfg := config.Default()
	cfg.GateAccount, cfg.MeterURL = "gns-gate", meter.URL

	r := sample()
	ungated := cfg
	ungated.GateAccount = ""
	FillTrees(context.Background(), ungated, "tok", "acme/agents", r)
	if asked.Load() != 0 || gated(r) {
		t.Fatalf("ungated: %d requests", asked.Load())
	}

	FillTrees(context.Background(), cfg, "tok", "acme/agents", r)
	if asked.Load() != int64(len(r.Rows)) {
		t.Errorf("%d requests for %d rows", asked.Load(), len(r.Rows))
	}
	if g := r.Rows[0].Gate; g == nil || g.Error != "" || len(g.Invocations) != 1 || g.Invocations[0].Tokens != 10 {
		t.Errorf("#14: %+v", g)
	}
	if g := r.Rows[1].Gate; g == nil || !strings.Contains(g.Error, "HTTP 503") {
		t.Errorf("#12: %+v", g)
	}
	if g := r.Rows[2].Gate; g == nil || g.Error != "" || g.Invocations == nil || len(g.Invocations) != 0 {
		t.Errorf("#9: %+v", g)
	}

	meter.Close()
	r = sample()
	FillTrees(context.Background(), cfg, "tok", "acme/agents", r)
	for _, row := range r.Rows {
		if row.Gate == nil || !strings.Contains(row.Gate.Error, "could not reach the meter") || row.Gate.Error != r.Rows[0].Gate.Error {
			t.Errorf("#%d with the meter down: %+v", row.Number, row.Gate)
		}
	}
}
