package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/mcpclient"
)

// TestMCPClient drives `gns-guard mcp` (the built binary) with the
// official TypeScript SDK's client against the real Gitea, as an agent
// would: initialize and list the tools; context on the live issue; a
// report, after which the guard passes every run the report's writes
// recorded; a refused report, which is an error result with its findings
// and writes nothing; bad arguments and an unknown tool, after which the
// session still serves; history, status, recover and check, each the same
// document the verb prints on the same state. The token, given to the
// server in its environment, appears in no schema, result or log line.
func TestMCPClient(t *testing.T) {
	t.Parallel()
	f := newFlow(t, 40000, "cascade::depth-2", "size::medium")
	bin := actiontest.Binary(t)
	repo := f.r.Owner + "/" + f.r.Name
	comments := len(f.r.Comments(t, f.n))
	bodyFile := filepath.Join(t.TempDir(), "issue.md")
	if err := os.WriteFile(bodyFile, []byte(f.body(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	on := func(more map[string]any) map[string]any {
		args := map[string]any{"issue": f.n, "guard_user": f.r.Bot}
		for k, v := range more {
			args[k] = v
		}
		return args
	}
	report := func(inv string, consumed int) map[string]any {
		return on(map[string]any{"agent": "lead-developer", "invocation": inv, "consumed": consumed,
			"action": "wired the limiter into the gateway config", "next_agent": "code-reviewer", "next_estimate": 2000})
	}
	tr := mcpclient.Run(t, mcpclient.Plan{
		Command: bin,
		Args:    []string{"mcp", "--server", f.r.S.URL, "--repo", repo, "--root", filepath.Dir(bodyFile)},
		Env:     map[string]string{"GITEA_TOKEN": f.agent.Token, "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")},
		Calls: []mcpclient.Call{
			{Name: "context", Arguments: on(nil)},
			{Name: "report", Arguments: report("mcp-1", 1200)},
			{Name: "report", Arguments: report("mcp-2", 40000)}, // the whole budget: refused
			{Name: "report", Arguments: map[string]any{"issue": "seven"}},
			{Name: "no-such-tool", Arguments: map[string]any{}},
			{Name: "history", Arguments: on(nil)},
			{Name: "status", Arguments: map[string]any{"guard_user": f.r.Bot}},
			{Name: "recover", Arguments: on(nil)},
			{Name: "context", Arguments: on(nil)},
			{Name: "check", Arguments: map[string]any{"file": bodyFile}},
		},
	})
	t.Logf("server %v, capabilities %v, %d tools", tr.Server, tr.Capabilities, len(tr.Tools))
	for i, c := range tr.Calls {
		t.Logf("call %d: %s", i, c)
	}

	var names []string
	for _, tool := range tr.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"check", "context", "history", "recover", "report", "spawn", "status"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	if tr.Capabilities["tools"] == nil || len(tr.TransportErrors) > 0 {
		t.Errorf("capabilities %v; the client could not read: %v", tr.Capabilities, tr.TransportErrors)
	}
	if strings.Contains(tr.Raw, f.agent.Token) || strings.Contains(strings.Join(tr.Stderr, "\n"), f.agent.Token) {
		t.Errorf("the token appears in what the client saw or in the server's log")
	}
	if len(tr.Calls) != 10 {
		t.Fatalf("%d calls answered, want 10", len(tr.Calls))
	}
	result := func(i int, isError bool) *mcpclient.Result {
		t.Helper()
		c := tr.Calls[i]
		if c.Result == nil || c.Result.IsError != isError {
			t.Fatalf("call %d: %s; want isError=%v", i, c, isError)
		}
		return c.Result
	}

	if ctx := result(0, false); ctx.StructuredContent["fits"] != true || ctx.StructuredContent["current_task"] != "wire the limiter into the gateway config" {
		t.Errorf("context: %s", ctx.Text())
	}
	if rep := result(1, false); rep.StructuredContent["outcome"] != "written" {
		t.Errorf("report: %s", rep.Text())
	}
	refused := result(2, true)
	if refused.StructuredContent["outcome"] != "refused" || !strings.Contains(refused.Text(), `"rule": "`+guard.RuleBudgetExhausted+`"`) {
		t.Errorf("the refused report: %s", refused.Text())
	}
	if bad := result(3, true); !strings.Contains(bad.Text(), "issue") || bad.StructuredContent != nil {
		t.Errorf("bad arguments: %s", bad.Text())
	}
	if c := tr.Calls[4]; c.Error == nil || c.Error.Code != -32602 {
		t.Errorf("an unknown tool: %s; want a protocol error -32602", c)
	}

	// The refused report wrote nothing: one comment more, the accepted
	// report's, and the body holds its invocation alone.
	if n := len(f.r.Comments(t, f.n)); n != comments+1 {
		t.Errorf("%d comments after two reports, one refused; want %d", n, comments+1)
	}
	if body := f.body(t); !strings.Contains(body, "mcp-1") || strings.Contains(body, "mcp-2") {
		t.Errorf("the body after the reports:\n%s", body)
	}

	// Each tool's document is the verb's on the same state.
	vars := map[string]string{"GITHUB_SERVER_URL": f.r.S.URL, "GITEA_TOKEN": f.agent.Token}
	n := strconv.FormatInt(f.n, 10)
	for i, args := range map[int][]string{
		5: {"history", "--repo", repo, "--issue", n, "--guard-user", f.r.Bot},
		6: {"status", "--repo", repo, "--guard-user", f.r.Bot},
		7: {"recover", "--repo", repo, "--issue", n, "--guard-user", f.r.Bot},
		8: {"context", "--repo", repo, "--issue", n, "--guard-user", f.r.Bot},
		9: {"check", bodyFile},
	} {
		stdout, stderr, code := gns(t, vars, append(args, "--format", "json")...)
		res := result(i, code != 0)
		if res.Text() != strings.TrimSpace(stdout) {
			t.Errorf("%s: the tool's document differs from the verb's (exit %d, %s):\ntool: %s\nverb: %s", args[0], code, stderr, res.Text(), stdout)
		}
	}
	var st []any
	if err := json.Unmarshal([]byte(result(6, false).Text()), &st); err != nil || len(st) != 1 || result(6, false).StructuredContent["issues"] == nil {
		t.Errorf("status: %v; structured %v", err, result(6, false).StructuredContent)
	}

	// The guard passes every run the accepted report recorded.
	runs := f.guard(t)
	if len(runs) == 0 {
		t.Fatal("the report recorded no run")
	}
	for _, r := range runs {
		if r.Code != 0 {
			t.Errorf("the guard on the report's writes: %s", r)
		}
	}
}
