// Package mcpclient drives an MCP server with a client that is not the
// project's own: the official TypeScript SDK's (@modelcontextprotocol/sdk,
// pinned by package-lock.json here), run by Node.js.
//
// Install puts the pinned packages, with npm ci, in a cache folder outside
// the repository named after the lock file's hash
// (~/.cache/gns-guard/mcp-client-HASH, as giteatest keeps Gitea); Run runs
// client.mjs on a plan and returns what the client saw. Node.js and npm
// come from Debian's nodejs and npm packages (.ci/run installs them).
package mcpclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

var (
	//go:embed package.json
	packageJSON []byte
	//go:embed package-lock.json
	packageLock []byte
	//go:embed client.mjs
	clientScript []byte
)

// Install installs the pinned client once per lock file and returns the
// folder whose node_modules holds it.
func Install(t testing.TB) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("mcpclient: %s is not on PATH: apt-get install nodejs npm (as root), or run .ci/run", tool)
		}
	}
	gitea, err := giteatest.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(packageLock)
	dir := filepath.Join(filepath.Dir(gitea), "mcp-client-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err == nil {
		return dir
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".mcp-client-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for name, data := range map[string][]byte{"package.json": packageJSON, "package-lock.json": packageLock} {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mcpclient: npm ci: %v\n%s", err, out)
	}
	// Another test process may have installed it meanwhile: either copy
	// is whole.
	if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
		if _, statErr := os.Stat(dir); statErr != nil {
			t.Fatalf("mcpclient: %v", err)
		}
	}
	return dir
}

// Plan is what the client does: start the server (or, with URL, reach
// one over streamable HTTP, sending Headers), then make the calls.
type Plan struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Calls   []Call            `json:"calls"`
}

// Call is one tool call.
type Call struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// Transcript is everything the client saw.
type Transcript struct {
	Server       map[string]any `json:"server"`
	Capabilities map[string]any `json:"capabilities"`
	Tools        []Tool         `json:"tools"`
	Calls        []Outcome      `json:"calls"`
	// Stderr are the server's log lines.
	Stderr []string `json:"stderr"`
	// TransportErrors are what the client could not read: anything on
	// the server's standard output that is not the protocol.
	TransportErrors []string `json:"transportErrors"`
	// Raw is the transcript as the client printed it.
	Raw string `json:"-"`
}

// Tool is a listed tool.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Outcome is a call and its result, or the protocol error it got.
type Outcome struct {
	Call
	Result *Result `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Result is a tool result.
type Result struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
}

// Text is the result's text content.
func (r *Result) Text() string {
	var s string
	for _, c := range r.Content {
		s += c.Text
	}
	return s
}

// Run runs the client on the plan and returns its transcript.
func Run(t testing.TB, p Plan) Transcript {
	t.Helper()
	modules := filepath.Join(Install(t), "node_modules")
	dir := t.TempDir()
	planFile := filepath.Join(dir, "plan.json")
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"client.mjs": clientScript, "plan.json": data} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "client.mjs"), planFile)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcpclient: node client.mjs: %v\n%s%s", err, out.String(), errOut.String())
	}
	tr := Transcript{Raw: out.String()}
	if err := json.Unmarshal(out.Bytes(), &tr); err != nil {
		t.Fatalf("mcpclient: the client's transcript: %v\n%s%s", err, out.String(), errOut.String())
	}
	return tr
}

// String is a short line of the outcome, for a transcript in the test's
// log.
func (o Outcome) String() string {
	args, _ := json.Marshal(o.Arguments)
	if len(args) > 160 {
		args = append(args[:160:160], "..."...)
	}
	if o.Error != nil {
		return fmt.Sprintf("%s %s -> protocol error %d: %s", o.Name, args, o.Error.Code, o.Error.Message)
	}
	text := o.Result.Text()
	var compact bytes.Buffer
	if json.Compact(&compact, []byte(text)) == nil {
		text = compact.String()
	}
	if len(text) > 200 {
		text = text[:200] + "..."
	}
	return fmt.Sprintf("%s %s -> isError=%v %s", o.Name, args, o.Result.IsError, text)
}
