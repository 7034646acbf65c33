package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool serves a command-line verb under its name.
type Tool struct {
	Name        string
	Description string
	// Required flags are given by every call, or Options.Defaults.
	Required []string
	// Flags are declared as the command line does; arguments derive from
	// them.
	Flags *flag.FlagSet
	// File: the verb reads a FILE (- for stdin), given as FileArg or
	// TextArg.
	File bool
	// FileDescription says what the FILE holds: "the issue body".
	FileDescription string
	// Offline works without the server (context's body); such a call gets no
	// Defaults.
	Offline string
	// ArrayKey is the key a document that is a JSON array (status's list
	// of issues) is given under in the structured content, which must be
	// an object.
	ArrayKey string
}

// Runner runs name and args with stdin; returns exit code and output.
type Runner func(ctx context.Context, args []string, stdin string) (code int, stdout, stderr []byte)

// Options configure the server.
type Options struct {
	Name, Version string
	Tools         []Tool
	Run           Runner
	// Fixed are flags every call is given when its verb has them (the
	// output format, the server's own ledger key variable): no tool takes
	// them as arguments.
	Fixed map[string]string
	// Omit: the server's own connection and secrets.
	Omit []string
	// Defaults fill flags a call omits (the default repository).
	Defaults map[string]string
	// Secrets are replaced by Redacted in every result and log line.
	Secrets []string
	// Log gets a line per call and the verb's stderr; stdout carries the
	// protocol.
	Log io.Writer
}

// Redacted replaces a secret.
const Redacted = "[redacted]"

// New fails when a tool's flags make no schema.
func New(o Options) (*mcp.Server, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	// Calls run at once; their log lines must not interleave.
	o.Log = &scrubber{w: o.Log, secrets: o.Secrets}
	s := mcp.NewServer(&mcp.Implementation{Name: o.Name, Version: o.Version}, &mcp.ServerOptions{
		Logger:       slog.New(slog.NewTextHandler(o.Log, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	for _, t := range o.Tools {
		in, params, err := schema(t, o)
		if err != nil {
			return nil, err
		}
		h := &handler{tool: t, params: params, o: o}
		mcp.AddTool(s, &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: in}, h.call)
	}
	return s, nil
}

// Serve runs until in ends or ctx is done.
func Serve(ctx context.Context, in io.Reader, out io.Writer, o Options) error {
	s, err := New(o)
	if err != nil {
		return err
	}
	rc, ok := in.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(in)
	}
	err = s.Run(ctx, &mcp.IOTransport{Reader: rc, Writer: nopCloser{out}})
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// handler calls one tool.
type handler struct {
	tool   Tool
	params []param
	o      Options
}

// call runs the verb on the call's arguments. The answer is its JSON
// document, as structured content and text; any exit but clean is an error
// result still carrying it. Bad arguments give an error result with the
// reason; a panic is a bug, made an error result.
func (h *handler) call(ctx context.Context, _ *mcp.CallToolRequest, args map[string]any) (res *mcp.CallToolResult, out any, err error) {
	began := time.Now()
	defer func() {
		if r := recover(); r != nil {
			res, out, err = failed(fmt.Sprintf("internal error: %v (a bug in gns-guard; please report it with the call that caused it)", r)), nil, nil
			h.logf("%s: panic: %v", h.tool.Name, r)
		}
	}()
	argv, stdin, err := commandLine(h.tool, h.params, h.o, args)
	if err != nil {
		h.logf("%s: bad arguments: %v", h.tool.Name, err)
		return failed(fmt.Sprintf("%s: %v", h.tool.Name, err)), nil, nil
	}
	code, stdout, stderr := h.o.Run(ctx, append([]string{h.tool.Name}, argv...), stdin)
	h.logf("%s: exit %d in %v", h.tool.Name, code, time.Since(began).Round(time.Millisecond))
	for _, line := range strings.Split(strings.TrimRight(string(stderr), "\n"), "\n") {
		if line != "" {
			h.logf("%s: %s", h.tool.Name, line)
		}
	}
	res, out = h.result(code, stdout)
	return res, out, nil
}

// result wraps the exit code and JSON document.
func (h *handler) result(code int, stdout []byte) (*mcp.CallToolResult, any) {
	doc := scrub(strings.TrimSpace(string(stdout)), h.o.Secrets)
	if !json.Valid([]byte(doc)) {
		return failed(fmt.Sprintf("%s printed no JSON document (exit %d): %s", h.tool.Name, code, doc)), nil
	}
	var structured any = json.RawMessage(doc)
	if !strings.HasPrefix(doc, "{") {
		key := h.tool.ArrayKey
		if key == "" {
			key = "result"
		}
		structured = map[string]json.RawMessage{key: json.RawMessage(doc)}
	}
	return &mcp.CallToolResult{
		IsError: code != 0,
		Content: []mcp.Content{&mcp.TextContent{Text: doc}},
	}, structured
}

// failed is an error result that says why.
func failed(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

func (h *handler) logf(format string, args ...any) {
	fmt.Fprintf(h.o.Log, "gns-guard mcp: "+format+"\n", args...)
}

// scrub replaces secrets, raw and JSON-escaped.
func scrub(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		s = strings.ReplaceAll(s, sec, Redacted)
		if q, _ := json.Marshal(sec); len(q) > 2 {
			s = strings.ReplaceAll(s, string(q[1:len(q)-1]), Redacted)
		}
	}
	return s
}

// scrubber scrubs each write to w.
type scrubber struct {
	mu      sync.Mutex
	w       io.Writer
	secrets []string
}

func (s *scrubber) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := io.WriteString(s.w, scrub(string(p), s.secrets)); err != nil {
		return 0, err
	}
	return len(p), nil
}
