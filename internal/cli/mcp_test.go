package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpClient serves `gns-guard mcp args...` in process, on env, to a client
// of the Go SDK over an in-memory connection, and returns the client's
// session; the server's log goes to env.Stderr.
func mcpClient(t testing.TB, env Env, args ...string) *mcp.ClientSession {
	t.Helper()
	v, _ := verbNamed("mcp")
	o, err := v.parse(args, env)
	if err != nil {
		t.Fatalf("mcp %v: %v", args, err)
	}
	opts, err := o.(*mcpOptions).serverOptions(env)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// toolCall is a tool's answer: its error flag, its text and its
// structured content.
type toolCall struct {
	isError    bool
	text       string
	structured map[string]any
}

// callTool calls a tool; a protocol error fails the test.
func callTool(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) toolCall {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	c := toolCall{isError: res.IsError}
	for _, b := range res.Content {
		if tc, ok := b.(*mcp.TextContent); ok {
			c.text += tc.Text
		}
	}
	if res.StructuredContent != nil {
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, &c.structured); err != nil {
			t.Fatalf("%s: structured content is not an object: %s", name, data)
		}
	}
	return c
}

// TestMCPTools: the server lists exactly the seven agent-facing tools, each
// schema made from its verb's flags: no secret or connection flag and no
// --format, the synopsis's required flags, the types and choices of the
// flags and of the settings table.
func TestMCPTools(t *testing.T) {
	env := testEnv(nil)
	cs := mcpClient(t, env)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]map[string]any{}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		data, _ := json.Marshal(tool.InputSchema)
		var s map[string]any
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		schemas[tool.Name] = s
		props := s["properties"].(map[string]any)
		for _, banned := range []string{"token", "server", "format", "ledger_key_env", "ledger_key", "admin_token"} {
			if _, ok := props[banned]; ok {
				t.Errorf("%s takes %s", tool.Name, banned)
			}
		}
		if strings.Contains(string(data), "GITEA_TOKEN") || strings.Contains(tool.Description, "token (default") {
			t.Errorf("%s's schema speaks of the token: %s", tool.Name, data)
		}
	}
	slices.Sort(names)
	if want := []string{"check", "context", "history", "recover", "report", "spawn", "status"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	required := func(tool string) []string {
		var out []string
		for _, r := range schemas[tool]["required"].([]any) {
			out = append(out, r.(string))
		}
		slices.Sort(out)
		return out
	}
	if got, want := required("report"), []string{"action", "agent", "consumed", "issue", "repo"}; !slices.Equal(got, want) {
		t.Errorf("report requires %v, want %v", got, want)
	}
	if got, want := required("spawn"), []string{"agent", "estimate", "issue", "repo"}; !slices.Equal(got, want) {
		t.Errorf("spawn requires %v, want %v", got, want)
	}
	if _, ok := schemas["context"]["required"]; ok {
		t.Errorf("context requires %v; --repo and --body are alternatives", schemas["context"]["required"])
	}
	prop := func(tool, name string) map[string]any {
		return schemas[tool]["properties"].(map[string]any)[name].(map[string]any)
	}
	for _, c := range []struct {
		tool, name, typ, enum string
	}{
		{"report", "consumed", "integer", ""},
		{"report", "next_agent", "string", ""},
		{"report", "status", "string", "ok failed"},
		{"report", "dry_run", "boolean", ""},
		{"spawn", "estimate", "integer", ""},
		{"spawn", "parent", "string", ""},
		{"context", "file", "array", ""},
		{"context", "size", "string", "tiny small medium large"},
		{"check", "prune_threshold", "number", ""},
		{"check", "history_tail", "integer", ""},
		{"check", "encoding", "string", "cl100k_base o200k_base"},
		{"check", "text", "string", ""},
		{"history", "public_key", "array", ""},
	} {
		p := prop(c.tool, c.name)
		if p["type"] != c.typ || p["description"] == "" {
			t.Errorf("%s.%s: %v, want type %s and a description", c.tool, c.name, p, c.typ)
		}
		var enum []string
		choices, _ := p["enum"].([]any)
		for _, e := range choices {
			enum = append(enum, e.(string))
		}
		if strings.Join(enum, " ") != c.enum {
			t.Errorf("%s.%s: choices %v, want %s", c.tool, c.name, enum, c.enum)
		}
	}

	// With a default repository, no tool requires one.
	withRepo := mcpClient(t, env, "--repo", "org/proj")
	res, err = withRepo.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		data, _ := json.Marshal(tool.InputSchema)
		var s struct{ Required []string }
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(s.Required, "repo") {
			t.Errorf("%s requires repo though the server has a default: %s", tool.Name, data)
		}
	}
}

// testEnv is an environment with vars, files from nowhere and a quiet
// log.
func testEnv(vars map[string]string) Env {
	env := System()
	env.Stdin = strings.NewReader("")
	env.Stdout, env.Stderr = &bytes.Buffer{}, &bytes.Buffer{}
	env.Getenv = func(k string) string { return vars[k] }
	env.AppendFile = func(string, []byte) error { return nil }
	return env
}

// checkTool runs (e) of the agreement test: the `check` tool, given the
// scenario's body as a file and as text, answers as `check` does.
func (r *agreeRun) checkTool(row *agreeRow) {
	sc := row.sc
	out, _, code := r.main(sc, append([]string{"check", agreeBodyPath}, offlineArgs(sc)...)...)
	cs := r.tools.on(r, sc)
	args := map[string]any{"labels": strings.Join(sc.labels, ","), "file": agreeBodyPath}
	if sc.config != nil {
		args["config"] = agreeConfigPath
	}
	byFile := callTool(r.t, cs, "check", args)
	if byFile.isError != (code != 0) || byFile.text != strings.TrimSpace(out) {
		row.disagree("the check tool (file): error %v, %s; check: exit %d, %s", byFile.isError, byFile.text, code, out)
	}
	delete(args, "file")
	args["text"] = sc.body.text
	byText := callTool(r.t, cs, "check", args)
	var rep checkReport
	if err := json.Unmarshal([]byte(byText.text), &rep); err != nil {
		r.t.Fatalf("%s: the check tool (text) gave no report: %v\n%s", sc.name(), err, byText.text)
	}
	if got := failingRules(rep.Findings); byText.isError != (code != 0) || !slices.Equal(got, row.check.rules) {
		row.disagree("the check tool (text): error %v, rules %v; check: exit %d, rules %v", byText.isError, got, code, row.check.rules)
	}
	if byText.structured["valid"] != rep.Valid {
		row.disagree("the check tool (text): structured valid=%v, text valid=%v", byText.structured["valid"], rep.Valid)
	}
}

// agreeTools is one MCP session for every scenario of the agreement
// test: its server's files and clock are those of the scenario it is on.
type agreeTools struct {
	cs  *mcp.ClientSession
	cur *agreeRun
	sc  agreeScenario
}

func newAgreeTools(t *testing.T) *agreeTools {
	a := &agreeTools{}
	env := Env{
		Stdin:  strings.NewReader(""),
		Stdout: &bytes.Buffer{},
		Stderr: &bytes.Buffer{},
		Getenv: func(k string) string {
			if a.cur == nil {
				return ""
			}
			return a.cur.env(a.sc, nil, nil).Getenv(k)
		},
		ReadFile: func(name string) ([]byte, error) {
			return a.cur.env(a.sc, nil, nil).ReadFile(name)
		},
		AppendFile: func(string, []byte) error { return nil },
		Now:        func() time.Time { return a.cur.clock.now() },
	}
	a.cs = mcpClient(t, env)
	return a
}

// on puts the session on the scenario r runs.
func (a *agreeTools) on(r *agreeRun, sc agreeScenario) *mcp.ClientSession {
	a.cur, a.sc = r, sc
	return a.cs
}

// TestMCPConfigExamples: the MCP client configurations the docs and the
// examples give start `gns-guard mcp` with flags it takes, and the tools
// they allow without asking exist. Kilo's (examples/.kilo/kilo.jsonc, and
// its snippet in docs/mcp.md) is in the format Kilo's loader reads, names
// no token and holds no {env:...} reference, which Kilo refuses in a
// project's configuration.
func TestMCPConfigExamples(t *testing.T) {
	doc := readTestdata(t, "docs/mcp.md")
	_, after, ok := strings.Cut(doc, "```json\n")
	snippet, _, ok2 := strings.Cut(after, "```")
	if !ok || !ok2 {
		t.Fatal("docs/mcp.md has no JSON snippet")
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command     string
			Args        []string
			Env         map[string]string
			AlwaysAllow []string
		}
	}
	if err := json.Unmarshal([]byte(snippet), &cfg); err != nil {
		t.Fatalf("docs/mcp.md: %v", err)
	}
	srv, ok := cfg.MCPServers["gns-guard"]
	if !ok || srv.Command != "gns-guard" || len(srv.Args) == 0 || srv.Args[0] != "mcp" {
		t.Fatalf("docs/mcp.md: %+v", cfg)
	}
	mcpArgsParse(t, "docs/mcp.md", srv.Args[1:])
	if srv.Env["GITEA_TOKEN"] != "${GITEA_TOKEN}" {
		t.Errorf("docs/mcp.md: the token must come from the environment, not the file: %v", srv.Env)
	}

	_, after, ok = strings.Cut(doc, "```jsonc\n")
	kiloDoc, _, ok2 := strings.Cut(after, "```")
	if !ok || !ok2 {
		t.Fatal("docs/mcp.md has no kilo.jsonc snippet")
	}
	for name, text := range map[string]string{"docs/mcp.md (Kilo)": kiloDoc, "examples/.kilo/kilo.jsonc": readTestdata(t, "examples/.kilo/kilo.jsonc")} {
		var kilo struct {
			MCP map[string]struct {
				Type        string
				Command     []string
				Environment map[string]string
				Enabled     *bool
			}
		}
		code := withoutLineComments(text)
		if err := json.Unmarshal([]byte(code), &kilo); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		k, ok := kilo.MCP["gns-guard"]
		if !ok || k.Type != "local" || len(k.Command) < 2 || k.Command[0] != "gns-guard" || k.Command[1] != "mcp" {
			t.Fatalf("%s: %+v", name, kilo)
		}
		// The example switches it off for the gated entry (TestKiloGatedEntry).
		if gate, gated := kilo.MCP["gns-gate"]; k.Enabled != nil && !*k.Enabled && (!gated || gate.Enabled == nil || !*gate.Enabled) {
			t.Errorf("%s: the stdio server is off, and no gated one is on: %+v", name, kilo)
		}
		mcpArgsParse(t, name, k.Command[2:])
		for key := range k.Environment {
			if strings.Contains(key, "TOKEN") {
				t.Errorf("%s: environment sets %s: the token is inherited, never written", name, key)
			}
		}
		if strings.Contains(code, "{env:") || strings.Contains(code, "${") {
			t.Errorf("%s holds a variable reference, which Kilo refuses or passes on as written:\n%s", name, code)
		}
	}
}

// mcpArgsParse checks that `gns-guard mcp` takes args.
func mcpArgsParse(t *testing.T, name string, args []string) {
	t.Helper()
	v, _ := verbNamed("mcp")
	if _, err := v.parse(args, parseEnv()); err != nil {
		t.Errorf("%s: mcp %v: %v", name, args, err)
	}
}

// withoutLineComments drops the lines of a JSONC text that are // comments.
func withoutLineComments(text string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "//") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// kiloServer is a server of a Kilo configuration's mcp map.
type kiloServer struct {
	Type    string
	URL     string
	Headers map[string]string
	OAuth   *bool
	Enabled *bool
}

// TestKiloGatedEntry: the shipped Kilo configuration declares the gate as a
// remote server at the meter's /mcp, switched on, with no header (no token
// is committed) and OAuth off; the user's entry it documents, in the file's
// comment and in docs/mcp.md, is the same server with the agent's token as
// a bearer header from the environment, which Kilo expands there only.
func TestKiloGatedEntry(t *testing.T) {
	text := readTestdata(t, "examples/.kilo/kilo.jsonc")
	var file struct{ MCP map[string]kiloServer }
	if err := json.Unmarshal([]byte(withoutLineComments(text)), &file); err != nil {
		t.Fatal(err)
	}
	gate, ok := file.MCP["gns-gate"]
	u, err := url.Parse(gate.URL)
	if !ok || gate.Type != "remote" || err != nil || u.Scheme != "https" || u.Path != "/mcp" || gate.Enabled == nil || !*gate.Enabled ||
		gate.OAuth == nil || *gate.OAuth || len(gate.Headers) != 0 {
		t.Fatalf("the gated entry: %+v", gate)
	}
	if stdio := file.MCP["gns-guard"]; stdio.Enabled == nil || *stdio.Enabled {
		t.Errorf("both servers are on: %+v", file.MCP)
	}

	// The user's entry, as the file's comment shows it.
	var comment []string
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, "//   "); ok {
			comment = append(comment, rest)
		}
	}
	doc := readTestdata(t, "docs/mcp.md")
	_, section, _ := strings.Cut(doc, "## Through the gate")
	section, _, _ = strings.Cut(section, "\n## ")
	snippets := strings.Split(section, "```jsonc\n")
	if len(snippets) != 3 {
		t.Fatalf("docs/mcp.md: %d jsonc snippets through the gate, want 2", len(snippets)-1)
	}
	project, _, _ := strings.Cut(snippets[1], "```")
	user, _, _ := strings.Cut(snippets[2], "```")
	for name, entry := range map[string]string{"the comment of examples/.kilo/kilo.jsonc": strings.Join(comment, "\n"), "docs/mcp.md": user} {
		var cfg struct{ MCP map[string]kiloServer }
		if err := json.Unmarshal([]byte(entry), &cfg); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, entry)
		}
		if k := cfg.MCP["gns-gate"]; k.Type != "remote" || k.URL != gate.URL || k.Headers["Authorization"] != "Bearer {env:GITEA_TOKEN}" {
			t.Errorf("%s: the user's entry %+v", name, k)
		}
	}
	var shown struct{ MCP map[string]kiloServer }
	if err := json.Unmarshal([]byte(project), &shown); err != nil || !reflect.DeepEqual(shown.MCP["gns-gate"], gate) {
		t.Errorf("docs/mcp.md shows %+v (%v), the example holds %+v", shown.MCP["gns-gate"], err, gate)
	}
}
