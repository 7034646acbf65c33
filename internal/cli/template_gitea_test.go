package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/setup"
	"github.com/gns-guard/gns-guard/internal/testkit"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// templateLedgerKey is the guard's ledger-key in these tests (256 bits).
const templateLedgerKey = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"

// templateTask is what a person writes under the template's ## Task.
const templateTask = "Add a token-bucket rate limit per API key to the gateway.\nDone when a burst over the limit gets 429 with Retry-After, and the tests say so."

// TestTemplateWorksAsGiven is a team's first issue on the real Gitea:
// `init` on a fresh repository, its pull request merged; a person opens
// an issue from the "GNS task" template (as Gitea offers it) and fills in
// the task and nothing else, on every task size. Before the guard has
// run, context says to wait for it. The guard's first run (fed the
// recorded Actions payload) passes, sets the issue's real number and says
// so in its status comment; context then loads the task first; and
// examples/agent/agent.sh, with no GUARD_USER and no estimate given,
// completes a step the guard passes.
func TestTemplateWorksAsGiven(t *testing.T) {
	t.Parallel()
	r := actiontest.NewRepo(t)
	agent := r.User(t, "agent", giteatest.PermWrite)
	stdout, stderr, code := gns(t, nil, "init", "--repo", r.Owner+"/"+r.Name, "--server", r.S.URL, "--token", r.S.AdminToken, "--format", "json")
	var rep struct {
		Pull *struct {
			Number int64 `json:"number"`
		} `json:"pull_request"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 0 || rep.Pull == nil {
		t.Fatalf("init: exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	r.API(t, r.S.AdminToken, http.MethodPost, r.Path("/pulls/%d/merge", rep.Pull.Number), map[string]string{"Do": "merge"}, nil)
	tpl := issueTemplate(t, r)
	guardRun := func(d actiontest.Delivery) actiontest.Result {
		t.Helper()
		return r.Step("ledger-key", templateLedgerKey).RunInProcess(t, d, actiontest.InProcess{})
	}
	// init's pull request changes the guard's own files. Here a guard was
	// watching already (the capture workflow records its events): they are
	// protected paths, which only an approver's label opens.
	for _, d := range r.Runs.Pending(t) {
		if d.Number != rep.Pull.Number {
			continue
		}
		id := d.Run
		res := guardRun(r.Runs.Next(t, func(x actiontest.Delivery) bool { return x.Run == id }))
		if res.Code != 0 && (res.Code != 1 || !slices.Contains(res.Rules(t), "protected-path")) {
			t.Errorf("a run on init's pull request: %s\n%s", res, res.Stdout)
		}
	}

	for _, size := range []string{"tiny", "small", "medium", "large"} {
		t.Run(size, func(t *testing.T) {
			// The person picks the size label; the body is the template's
			// with the task written in.
			labels := slices.Clone(tpl.Labels)
			for i, l := range labels {
				if strings.HasPrefix(l, "size::") {
					labels[i] = "size::" + size
				}
			}
			body := strings.Replace(tpl.Content, "What to build or change, and how anyone can tell it is done.", templateTask, 1)
			if body == tpl.Content || !strings.Contains(body, "  issue: 0\n") {
				t.Fatalf("the template has no task to fill in or no issue: 0:\n%s", tpl.Content)
			}
			n := actiontest.CreateIssue(t, r.S, r.Owner, r.Name, "Rate limits ("+size+")", func(int64) string { return body }, labels...)
			if n <= rep.Pull.Number {
				t.Fatalf("issue #%d, after init's pull request #%d", n, rep.Pull.Number)
			}
			f := &flow{r: r, agent: agent, n: n}
			asAgent := []string{"--repo", r.Owner + "/" + r.Name, "--issue", strconv.FormatInt(n, 10), "--server", r.S.URL, "--token", agent.Token}

			// Before the guard's first run: wait for it.
			_, stderr, code := gnsContext(t, asAgent...)
			if code != 3 || !strings.Contains(stderr, "placeholder issue: 0") || !strings.Contains(stderr, "Wait for that run") {
				t.Errorf("context before the guard's first run: exit %d\n%s", code, stderr)
			}

			d := r.Runs.Next(t, actiontest.From("issues", "opened", n, r.S.AdminLogin))
			res := guardRun(d)
			t.Logf("the guard's first run: %s\n%s", res, strings.Join(res.Writes, "\n"))
			if res.Code != 0 || res.Outputs["result"] != "pass" {
				t.Fatalf("the guard's first run on the template as given: %s\n%s", res, res.Stdout)
			}
			// The number set, and the read hint the same write carries
			// (docs/ledger.md#the-read-hint): nothing else changes.
			if got := f.body(t); hintLine.ReplaceAllString(got, "") != strings.Replace(body, "  issue: 0\n", fmt.Sprintf("  issue: %d\n", n), 1) || !strings.Contains(got, "```yaml\n# gns-guard: comments since ") {
				t.Fatalf("the body after the first run is not the template with the number set and the read hint:\n%s", got)
			}
			if st := r.Status(t, n); !strings.Contains(st.Body, fmt.Sprintf("placeholder `issue: 0`: the guard set it to this issue's number, %d.", n)) {
				t.Errorf("the status comment does not say the number was set:\n%s", st.Body)
			}
			for _, res := range f.guardWith(t, guardRun) {
				if res.Code != 0 {
					t.Fatalf("a later run failed: %s\n%s", res, res.Stdout)
				}
			}

			// context, with no --guard-user, loads the task first.
			stdout, stderr, code := gnsContext(t, asAgent...)
			if code != 0 || !strings.Contains(stdout, fmt.Sprintf("## P0 Task of issue #%d\n```markdown\n%s\n```\n\n## P0 Checkpoint of issue #%d\n", n, templateTask, n)) {
				t.Fatalf("context: exit %d\n%s%s", code, stdout, stderr)
			}
			if !strings.Contains(stdout, "Not loaded: the guard's own comments") {
				t.Errorf("context took the guard's status comment for a workflow comment (it did not find the guard's login):\n%s", stdout)
			}

			// agent.sh, out of the box.
			out, errOut, code, entry := runAgentScript(t, f, "inv-"+size, nil)
			t.Logf("agent.sh (exit %d):\n%s%s", code, out, errOut)
			if code != 0 || !strings.Contains(out, "checkpoint patched") || !strings.Contains(entry, templateTask) {
				t.Fatalf("agent.sh on the template (%s): exit %d\n%s%s\nentry:\n%s", size, code, out, errOut, entry)
			}
			for _, res := range f.guardWith(t, guardRun) {
				if res.Code != 0 {
					t.Fatalf("the guard failed agent.sh's step: %s\n%s", res, res.Stdout)
				}
			}
		})
	}
}

// templateOffered is an issue template as Gitea offers it.
type templateOffered struct {
	Name    string   `json:"name"`
	Labels  []string `json:"labels"`
	Content string   `json:"content"`
}

// issueTemplate is init's "GNS task" template as the repository offers it
// to a person opening an issue.
func issueTemplate(t *testing.T, r *actiontest.Repo) templateOffered {
	t.Helper()
	var tpls []templateOffered
	r.API(t, r.S.AdminToken, http.MethodGet, r.Path("/issue_templates"), nil, &tpls)
	for _, tp := range tpls {
		if tp.Name == "GNS task" {
			return tp
		}
	}
	t.Fatalf("the repository offers no GNS task template (%d templates; %s)", len(tpls), setup.IssueTemplatePath)
	return templateOffered{}
}

// guardWith runs run on every run the issue's events recorded, in order,
// but the guard's own, and returns their results.
func (f *flow) guardWith(t *testing.T, run func(actiontest.Delivery) actiontest.Result) []actiontest.Result {
	t.Helper()
	var out []actiontest.Result
	for _, d := range f.r.Runs.Pending(t) {
		id := d.Run
		d = f.r.Runs.Next(t, func(x actiontest.Delivery) bool { return x.Run == id })
		if d.Sender == f.r.Bot {
			continue
		}
		out = append(out, run(d))
	}
	return out
}

// runAgentScript runs examples/agent/agent.sh as the agent with only the
// variables it requires (and extra), and returns its output, exit code
// and the entry load it wrote.
func runAgentScript(t *testing.T, f *flow, invocation string, extra []string) (stdout, stderr string, code int, entry string) {
	t.Helper()
	root, err := testkit.Root()
	if err != nil {
		t.Fatal(err)
	}
	bin := actiontest.Binary(t)
	work := t.TempDir()
	cmd := exec.Command("sh", filepath.Join(root, "examples", "agent", "agent.sh"))
	cmd.Env = append([]string{
		"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + work,
		"GITHUB_SERVER_URL=" + f.r.S.URL,
		"GITEA_TOKEN=" + f.agent.Token,
		"REPO=" + f.r.Owner + "/" + f.r.Name,
		"ISSUE=" + strconv.FormatInt(f.n, 10),
		"INVOCATION=" + invocation,
		"WORKDIR=" + work,
	}, extra...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(work, "entry.md"))
	return out.String(), errb.String(), code, string(data)
}
