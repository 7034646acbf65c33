package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const secret = "s3cr3t-token-value"

// fakeVerb is a verb run in memory: it records the command lines it gets
// and answers by its first flag's value.
type fakeVerb struct {
	mu    sync.Mutex
	calls [][]string
	stdin []string
	// cancelled receives the error of a blocked call's context.
	cancelled chan error
}

func (f *fakeVerb) run(ctx context.Context, args []string, stdin string) (int, []byte, []byte) {
	f.mu.Lock()
	f.calls = append(f.calls, args)
	f.stdin = append(f.stdin, stdin)
	f.mu.Unlock()
	switch {
	case slices.Contains(args, "--mode=block"):
		<-ctx.Done()
		f.cancelled <- ctx.Err()
		return 3, []byte(`{"error":{"exit_code":3,"kind":"cannot-run","message":"cancelled"}}`), nil
	case slices.Contains(args, "--mode=panic"):
		panic("the verb fell over")
	case slices.Contains(args, "--mode=violation"):
		return 1, []byte(`{"valid":false,"findings":[{"rule":"budget"}]}` + "\n"), []byte("warning: over budget\n")
	case slices.Contains(args, "--mode=usage"):
		return 2, []byte(`{"error":{"exit_code":2,"kind":"usage","message":"bad repo"}}`), nil
	case slices.Contains(args, "--mode=leak"):
		return 0, []byte(`{"token":"` + secret + `"}`), []byte("used " + secret + "\n")
	case slices.Contains(args, "--mode=list"):
		return 0, []byte(`[{"number":1}]`), nil
	case slices.Contains(args, "--mode=text"):
		return 0, []byte("not json"), nil
	}
	return 0, []byte(`{"valid":true}`), nil
}

func fakeFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("fake", flag.ContinueOnError)
	fs.String("repo", "", "the repository, OWNER/NAME")
	fs.Int64("issue", 0, "the issue's number")
	fs.String("mode", "", "how the verb answers")
	fs.String("token", "", "an access token")
	fs.String("format", "text", "output format")
	fs.Bool("force", false, "write anyway")
	fs.String("status", "ok", "how it ended: `ok|failed`")
	fs.String("history-tail", "", "a setting of the table")
	fs.String("allowed-agents", "", "a list setting of the table")
	return fs
}

func serve(t *testing.T, f *fakeVerb, log *bytes.Buffer) *mcp.ClientSession {
	t.Helper()
	o := Options{
		Name: "test", Version: "0",
		Tools: []Tool{{Name: "fake", Description: "a fake verb", Flags: fakeFlags(), File: true, ArrayKey: "issues",
			Required: []string{"repo", "issue"}}},
		Run:      f.run,
		Fixed:    map[string]string{"format": "json"},
		Omit:     []string{"token"},
		Defaults: map[string]string{"repo": "org/proj"},
		Secrets:  []string{secret},
		Log:      log,
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fake", Arguments: args})
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	var text string
	for _, c := range res.Content {
		text += c.(*mcp.TextContent).Text
	}
	return res, text
}

func structured(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestSchema: the schema is the flags': types from the flag's value and
// the settings table, choices from the value's name, required flags as
// the tool declares them, the FILE as file or text; the omitted and fixed
// flags are not arguments, and a flag with a default is not required.
func TestSchema(t *testing.T) {
	o := Options{Fixed: map[string]string{"format": "json"}, Omit: []string{"token"}, Defaults: map[string]string{"repo": "org/proj"}}
	s, params, err := schema(Tool{Name: "fake", Flags: fakeFlags(), File: true,
		Required: []string{"repo", "issue"}}, o)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(s)
	want := `{"type":"object","properties":{` +
		`"allowed_agents":{"type":["string","array"],"items":{"type":"string"},"description":"a list setting of the table Accepts names, comma- or newline-separated (in the file also a YAML list)."},` +
		`"force":{"type":"boolean","description":"write anyway"},` +
		`"history_tail":{"type":"integer","description":"a setting of the table Accepts a whole number \u003e= 1."},` +
		`"issue":{"type":"integer","description":"the issue's number"},` +
		`"mode":{"type":"string","description":"how the verb answers"},` +
		`"repo":{"type":"string","description":"the repository, OWNER/NAME"},` +
		`"status":{"type":"string","description":"how it ended: ok|failed","enum":["ok","failed"]},` +
		`"file":{"type":"string","description":"a file holding the input, on the server's machine (give file or text)"},` +
		`"text":{"type":"string","description":"the input itself, as text (give file or text)"}},` +
		`"required":["issue"],"additionalProperties":false}`
	if string(data) != want {
		t.Errorf("schema\n%s\nwant\n%s", data, want)
	}
	if len(params) != 9 {
		t.Errorf("%d params, want 9", len(params))
	}
}

// TestCalls: a call runs the verb's command line with the fixed flags and
// the defaults; its document is the structured content and the text; a
// violation or usage error is an error result that keeps the document;
// bad arguments, a panic or a verb that prints no JSON are error results,
// and the session serves the next call; secrets never leave.
func TestCalls(t *testing.T) {
	f := &fakeVerb{}
	var log bytes.Buffer
	cs := serve(t, f, &log)

	res, text := call(t, cs, map[string]any{"issue": 7, "text": "the body", "force": true, "allowed_agents": []any{"a", "b"}})
	if res.IsError || text != `{"valid":true}` || structured(t, res) != `{"valid":true}` {
		t.Errorf("clean call: error %v, %q, %s", res.IsError, text, structured(t, res))
	}
	wantArgs := []string{"fake", "--format=json", "--repo=org/proj", "--allowed-agents=a,b", "--force=true", "--issue=7", "--", "-"}
	if !slices.Equal(f.calls[0], wantArgs) || f.stdin[0] != "the body" {
		t.Errorf("command line %q, stdin %q; want %q, the body", f.calls[0], f.stdin[0], wantArgs)
	}

	res, text = call(t, cs, map[string]any{"issue": 7, "repo": "o/r", "file": "-x.md", "mode": "violation"})
	if !res.IsError || !strings.Contains(structured(t, res), `"rule":"budget"`) || !strings.Contains(text, `"findings"`) {
		t.Errorf("violation: error %v, %q, %s", res.IsError, text, structured(t, res))
	}
	if got := f.calls[1]; !slices.Contains(got, "--repo=o/r") || slices.Contains(got, "--repo=org/proj") || got[len(got)-1] != "-x.md" || got[len(got)-2] != "--" {
		t.Errorf("command line %q: want the call's repo and the file after --", got)
	}

	res, _ = call(t, cs, map[string]any{"issue": 7, "text": "x", "mode": "usage"})
	if !res.IsError || !strings.Contains(structured(t, res), `"kind":"usage"`) {
		t.Errorf("usage error: error %v, %s", res.IsError, structured(t, res))
	}
	res, text = call(t, cs, map[string]any{"issue": 7, "text": "x", "mode": "list"})
	if res.IsError || text != `[{"number":1}]` || structured(t, res) != `{"issues":[{"number":1}]}` {
		t.Errorf("a list: error %v, %q, %s", res.IsError, text, structured(t, res))
	}

	calls := len(f.calls)
	for _, bad := range []map[string]any{
		{"issue": "seven", "text": "x"},
		{"issue": 1.5, "text": "x"},
		{"text": "x"}, // no issue
		{"issue": 7, "text": "x", "token": "t"},
		{"issue": 7, "text": "x", "format": "text"},
		{"issue": 7, "text": "x", "status": "maybe"},
		{"issue": 7, "text": "x", "history_tail": "three"},
		{"issue": 7},
		{"issue": 7, "text": "x", "file": "y"},
		{"issue": 7, "file": "-"},
	} {
		res, text := call(t, cs, bad)
		if !res.IsError || text == "" {
			t.Errorf("%v: error %v, %q; want an error result that says why", bad, res.IsError, text)
		}
	}
	if len(f.calls) != calls {
		t.Errorf("bad arguments ran the verb: %q", f.calls[calls:])
	}

	for _, mode := range []string{"panic", "text"} {
		res, text = call(t, cs, map[string]any{"issue": 7, "text": "x", "mode": mode})
		if !res.IsError || text == "" {
			t.Errorf("%s: error %v, %q", mode, res.IsError, text)
		}
	}
	res, text = call(t, cs, map[string]any{"issue": 7, "text": "x", "mode": "leak"})
	if strings.Contains(text, secret) || strings.Contains(structured(t, res), secret) || !strings.Contains(text, Redacted) {
		t.Errorf("a secret left in a result: %q", text)
	}
	if res, _ := call(t, cs, map[string]any{"issue": 7, "text": "x"}); res.IsError {
		t.Error("the session does not serve after the bad calls")
	}
	if strings.Contains(log.String(), secret) || !strings.Contains(log.String(), "fake: used "+Redacted) ||
		!strings.Contains(log.String(), "fake: panic: the verb fell over") || !strings.Contains(log.String(), "fake: warning: over budget") {
		t.Errorf("log:\n%s", log.String())
	}
}

// TestCancel: a call the client cancels has its verb's context cancelled,
// and the session serves the next call.
func TestCancel(t *testing.T) {
	f := &fakeVerb{cancelled: make(chan error, 1)}
	cs := serve(t, f, &bytes.Buffer{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake", Arguments: map[string]any{"issue": 7, "text": "x", "mode": "block"}})
		done <- err
	}()
	for {
		f.mu.Lock()
		n := len(f.calls)
		f.mu.Unlock()
		if n > 0 {
			break
		}
		runtime.Gosched()
	}
	cancel()
	if err := <-f.cancelled; err == nil {
		t.Error("the verb's context was not cancelled")
	}
	if err := <-done; err == nil {
		t.Error("the cancelled call returned no error to the client")
	}
	if res, _ := call(t, cs, map[string]any{"issue": 7, "text": "x"}); res.IsError {
		t.Error("the session does not serve after a cancelled call")
	}
}
