// Package sdkclient calls gns-guard meter with clients that are not the
// project's own: the official OpenAI and Anthropic TypeScript SDKs
// (openai and @anthropic-ai/sdk, pinned by package-lock.json here), run by
// Node.js, unmodified: only their base URL and key are set.
//
// Install puts the pinned packages, with npm ci, in a cache folder outside
// the repository named after the lock file's hash
// (~/.cache/gns-guard/sdk-client-HASH), as package mcpclient does; Run runs
// client.mjs on a plan and returns what the clients saw.
package sdkclient

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

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

// Install installs the pinned clients once per lock file and returns the
// folder whose node_modules holds them.
func Install(t testing.TB) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("sdkclient: %s is not on PATH: apt-get install nodejs npm (as root), or run .ci/run", tool)
		}
	}
	gitea, err := giteatest.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(packageLock)
	dir := filepath.Join(filepath.Dir(gitea), "sdk-client-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json")); err == nil {
		return dir
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".sdk-client-")
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
		t.Fatalf("sdkclient: npm ci: %v\n%s", err, out)
	}
	// Another test process may have installed it meanwhile: either copy
	// is whole.
	if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
		if _, statErr := os.Stat(dir); statErr != nil {
			t.Fatalf("sdkclient: %v", err)
		}
	}
	return dir
}

// Call is one call of an SDK: its base URL and key, the kind of call
// (chat, chat-stream, responses, responses-stream, embeddings, messages,
// messages-stream) and the request's body.
type Call struct {
	SDK     string            `json:"sdk"`
	Kind    string            `json:"kind"`
	BaseURL string            `json:"baseURL"`
	APIKey  string            `json:"apiKey,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    map[string]any    `json:"body"`
}

// Result is what the client saw of one call.
type Result struct {
	SDK         string            `json:"sdk"`
	Kind        string            `json:"kind"`
	Text        string            `json:"text"`
	Usage       map[string]any    `json:"usage"`
	Headers     map[string]string `json:"headers"`
	Chunks      int               `json:"chunks"`
	UsageChunks int               `json:"usageChunks"`
	UsageFields int               `json:"usageFields"`
	Events      int               `json:"events"`
	Dims        int               `json:"dims"`
	Error       *struct {
		Name    string `json:"name"`
		Status  int    `json:"status"`
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code"`
	} `json:"error"`
}

// Run makes the calls, one after another, and returns what the clients
// saw.
func Run(t testing.TB, calls []Call) []Result {
	t.Helper()
	dir := Install(t)
	script := filepath.Join(dir, "client.mjs")
	if err := os.WriteFile(script, clientScript, 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := json.Marshal(map[string]any{"calls": calls})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", script)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sdkclient: node client.mjs: %v\n%s", err, stderr.String())
	}
	var tr struct {
		Results []Result `json:"results"`
	}
	if err := json.Unmarshal(out, &tr); err != nil {
		t.Fatalf("sdkclient: the transcript is not JSON: %v\n%s\n%s", err, out, stderr.String())
	}
	return tr.Results
}
