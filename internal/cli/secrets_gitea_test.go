package cli_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/mcpclient"
)

// noTokenWritten fails the test when any comment or the body of the flow's
// issue holds token, as it is or base64-encoded, or when comments moved
// from want.
func noTokenWritten(t *testing.T, f *flow, token string, want int) {
	t.Helper()
	cs := f.r.Comments(t, f.n)
	for _, c := range cs {
		if strings.Contains(c.Body, token) || strings.Contains(c.Body, base64.StdEncoding.EncodeToString([]byte(token))[:30]) {
			t.Errorf("comment %d by %s carries the token", c.ID, c.User.Login)
		}
	}
	if strings.Contains(f.body(t), token) {
		t.Error("the body carries the token")
	}
	if len(cs) != want {
		t.Errorf("%d comments, want %d: something was written", len(cs), want)
	}
}

// Attack: a prompt-injected model has `report` post the agent's .env as
// its result, from the shell and base64-encoded. Nothing a verb writes
// carries a secret it holds: refused, exit 1, naming the secret; nothing
// written.
func TestReportRefusesASecret(t *testing.T) {
	f := newFlow(t, 40000, "cascade::depth-2", "size::medium")
	comments := len(f.r.Comments(t, f.n))
	dir := t.TempDir()
	env := "HOME=/home/agent\nGITEA_TOKEN=" + f.agent.Token + "\n"
	for name, text := range map[string]string{".env": env, "encoded.txt": base64.StdEncoding.EncodeToString([]byte(env))} {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := gns(t, map[string]string{"GITEA_TOKEN": f.agent.Token}, "report", "--repo", f.r.Owner+"/"+f.r.Name, "--issue", strconv.FormatInt(f.n, 10),
			"--server", f.r.S.URL, "--guard-user", f.r.Bot, "--agent", "lead-developer", "--invocation", "leak-"+name, "--consumed", "100",
			"--action", "done", "--result-file", file)
		if code != 1 || !strings.Contains(stderr, "GITEA_TOKEN") || !strings.Contains(stderr, "nothing was written") {
			t.Errorf("%s: exit %d, want 1 naming GITEA_TOKEN:\n%s", name, code, stderr)
		}
	}
	noTokenWritten(t, f, f.agent.Token, comments)
}

// Attack, through the official MCP client: report's result_file names the
// checkout's .env; check's file names a file outside the server's folder,
// directly and through a symlink. The write is refused naming the secret;
// the reads outside the folder are refused; the session keeps serving.
func TestMCPFileArgumentsConfined(t *testing.T) {
	f := newFlow(t, 40000, "cascade::depth-2", "size::medium")
	comments := len(f.r.Comments(t, f.n))
	work, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "id_ed25519")
	files := map[string]string{filepath.Join(work, ".env"): "GITEA_TOKEN=" + f.agent.Token + "\n", secret: "-----BEGIN OPENSSH PRIVATE KEY-----\n", filepath.Join(work, "issue.md"): f.body(t)}
	for name, text := range files {
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(work, "link.md")); err != nil {
		t.Fatal(err)
	}
	report := map[string]any{"issue": f.n, "guard_user": f.r.Bot, "agent": "lead-developer", "invocation": "leak", "consumed": 100, "action": "done", "result_file": ".env"}
	tr := mcpclient.Run(t, mcpclient.Plan{
		Command: actiontest.Binary(t),
		Args:    []string{"mcp", "--server", f.r.S.URL, "--repo", f.r.Owner + "/" + f.r.Name, "--root", work},
		Env:     map[string]string{"GITEA_TOKEN": f.agent.Token, "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")},
		Calls: []mcpclient.Call{
			{Name: "report", Arguments: report},
			{Name: "check", Arguments: map[string]any{"file": secret}},
			{Name: "check", Arguments: map[string]any{"file": "link.md"}},
			{Name: "check", Arguments: map[string]any{"file": "../" + filepath.Base(outside) + "/id_ed25519"}},
			{Name: "check", Arguments: map[string]any{"file": "issue.md"}},
		},
	})
	for i, c := range tr.Calls {
		t.Logf("call %d: %s", i, c)
	}
	if len(tr.Calls) != 5 {
		t.Fatalf("%d calls answered, want 5", len(tr.Calls))
	}
	if r := tr.Calls[0].Result; r == nil || !r.IsError || !strings.Contains(r.Text(), "GITEA_TOKEN") {
		t.Errorf("the report of .env was not refused naming GITEA_TOKEN: %s", tr.Calls[0])
	}
	for i := 1; i <= 3; i++ {
		if r := tr.Calls[i].Result; r == nil || !r.IsError || !strings.Contains(r.Text(), "outside the folder") && !strings.Contains(r.Text(), "no link out of it") || strings.Contains(r.Text(), "OPENSSH") {
			t.Errorf("call %d read outside the server's folder: %s", i, tr.Calls[i])
		}
	}
	if r := tr.Calls[4].Result; r == nil || r.IsError {
		t.Errorf("a file inside the folder was not read: %s", tr.Calls[4])
	}
	noTokenWritten(t, f, f.agent.Token, comments)
}
