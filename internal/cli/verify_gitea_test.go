package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/prune"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// verifyBinary runs `gns-guard history --verify` as a separate process
// whose environment holds PATH and HOME only: no secret, checked.
func verifyBinary(t *testing.T, secret string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, actiontest.Binary(t), append([]string{"history", "--verify"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	for _, kv := range cmd.Env {
		if strings.Contains(kv, secret) || strings.Contains(strings.ToUpper(kv), "LEDGER") || strings.HasPrefix(kv, "GITEA_TOKEN=") || strings.HasPrefix(kv, "GITHUB_TOKEN=") {
			t.Fatalf("the environment of history --verify is not clean: %q", kv)
		}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestHistoryVerifyOnGitea: the guard, holding ledger-key, prunes an
// issue twice on the real server; the repository publishes the public key
// in .gitea/gns-guard.yml. An agent, holding no secret, verifies the whole
// history with it (exit 0); then edits an archive comment through the API
// as it can (an entry dropped, the hash recomputed): history --verify
// exits 1 and names that comment by its id and URL.
func TestHistoryVerifyOnGitea(t *testing.T) {
	t.Parallel()
	r := actiontest.NewRepo(t)
	const secret = "a12dd3a7fd3203a452eb34d91a9be20569d5e337a3384347068895c07f3e0c5a" // the ledger key of the verify test
	kid := ledger.SecretKeys([]byte(secret)).KeyIDs()[0]
	r.CommitFile(t, ".gitea/gns-guard.yml", "ledger-public-key: "+ledger.PublicKey([]byte(secret))+"\n")
	agent := r.User(t, "agent", giteatest.PermWrite)
	guardRun := func(d actiontest.Delivery) actiontest.Result {
		t.Helper()
		return r.Step("ledger-key", secret).RunInProcess(t, d, actiontest.InProcess{})
	}

	// The first run prunes the long history of the issue as opened.
	n, d := r.Open(t, "verify the archives", func(n int64) string { return actiontest.Example(t, "over-budget.md", n) },
		"cascade::depth-2", "size::medium", "phase::implementation")
	if res := guardRun(d); res.Code != 0 || res.Outputs["pruned"] != "true" {
		t.Fatalf("the first run did not prune:\n%s", res)
	}
	// Agents report; the fourth takes the tail past twice history-tail and
	// the guard prunes again on the runs that report caused.
	num := strconv.FormatInt(n, 10)
	repo := r.Owner + "/" + r.Name
	pruned := false
	for i := 1; i <= 4; i++ {
		if out, errOut, code := gns(t, nil, "report", "--repo", repo, "--issue", num, "--server", r.S.URL, "--token", agent.Token, "--guard-user", r.Bot,
			"--agent", "code-reviewer", "--invocation", fmt.Sprintf("inv-review-%d", i), "--consumed", "50", "--action", "reviewed the wiring",
			"--next-agent", "lead-developer", "--next-estimate", "300"); code != 0 {
			t.Fatalf("report %d: exit %d\n%s%s", i, code, out, errOut)
		}
		for _, d := range r.Runs.Pending(t) {
			id := d.Run
			d = r.Runs.Next(t, func(x actiontest.Delivery) bool { return x.Run == id })
			if d.Sender == r.Bot || d.Number != n {
				continue
			}
			res := guardRun(d)
			if res.Code != 0 {
				t.Fatalf("the guard failed a run of report %d:\n%s", i, res)
			}
			pruned = pruned || res.Outputs["pruned"] == "true"
		}
	}
	archives := r.GuardComments(t, n, prune.MarkerPrefix)
	if !pruned || len(archives) != 2 {
		t.Fatalf("pruned %v, %d archive comments, want 2", pruned, len(archives))
	}
	for _, a := range archives {
		if !strings.Contains(a.Body, " kid="+kid+" sig=") {
			t.Fatalf("archive comment %d is not signed with key %s:\n%s", a.ID, kid, a.Body)
		}
	}

	// The agent verifies with the published key, holding no secret.
	args := []string{"--repo", repo, "--issue", num, "--server", r.S.URL, "--token", agent.Token}
	out, errOut, code := verifyBinary(t, secret, args...)
	want := fmt.Sprintf("issue #%d: the history is intact: 1 ledger record and 2 archive parts verified, signed by key %s; ", n, kid)
	if code != 0 || !strings.HasPrefix(out, want) || strings.Count(out, "\n") != 1 {
		t.Fatalf("history --verify: exit %d\nstdout %q\nwant   %q…\nstderr %s", code, out, want, errOut)
	}

	// The agent drops an entry of the first archive and recomputes its
	// hash: the comment reads as an archive whose hash matches, but its
	// signature is the guard's over the entries it had.
	victim := archives[0]
	a, err := prune.ParseArchive(victim.Body)
	if err != nil || len(a.Entries) < 2 {
		t.Fatalf("the first archive: %v", err)
	}
	js, _ := json.Marshal(a.Entries[1])
	body := strings.Replace(victim.Body, ","+string(js), "", 1)
	body = strings.ReplaceAll(body, a.SHA256, prune.Hash(a.Issue, a.Phase, a.Budget, slices.Delete(slices.Clone(a.Entries), 1, 2)))
	if p, err := prune.ParseArchive(body); err != nil || prune.Verify([]*prune.Archive{p}) != nil || len(p.Entries) != len(a.Entries)-1 {
		t.Fatalf("the edited archive does not read back with a matching hash: %v", err)
	}
	r.EditComment(t, n, victim.ID, agent, body)

	out, errOut, code = verifyBinary(t, secret, args...)
	named := fmt.Sprintf("comment %d (%s): ", victim.ID, victim.HTMLURL)
	if code != 1 || out != "" || !strings.Contains(errOut, named) || !strings.Contains(errOut, "signature does not verify under key "+kid) {
		t.Fatalf("history --verify after the edit: exit %d, want 1 naming %q\nstdout %q\nstderr %s", code, named, out, errOut)
	}
	out, errOut, code = verifyBinary(t, secret, append(args, "--format", "json")...)
	var rep struct {
		Verified bool `json:"verified"`
		Problems []struct {
			Comment int64  `json:"comment"`
			URL     string `json:"url"`
			Message string `json:"message"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 || rep.Verified || len(rep.Problems) == 0 ||
		rep.Problems[0].Comment != victim.ID || rep.Problems[0].URL != victim.HTMLURL {
		t.Errorf("history --verify --format json: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}

	// The agent edits the ledger record in the guard's status comment:
	// history --verify names that comment, by id and URL.
	r.EditComment(t, n, victim.ID, agent, victim.Body)
	status := r.Status(t, n)
	r.EditComment(t, n, status.ID, agent, strings.Replace(status.Body, `"total":`, `"total":9`, 1))
	out, errOut, code = verifyBinary(t, secret, args...)
	named = fmt.Sprintf("comment %d (%s): ", status.ID, status.HTMLURL)
	if code != 1 || !strings.Contains(errOut, named) || !strings.Contains(errOut, "does not verify") {
		t.Errorf("history --verify after the record's edit: exit %d, want 1 naming %q\nstdout %q\nstderr %s", code, named, out, errOut)
	}
}
