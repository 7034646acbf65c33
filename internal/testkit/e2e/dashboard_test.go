package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// dashboardMarker is the dashboard issue's marker (package dashboard).
const dashboardMarker = "<!-- gns-guard:dashboard -->"

// TestDashboardModeOnWorkflowDispatch: the action with mode: dashboard,
// started by workflow_dispatch through the real runner with the Actions
// token, keeps one dashboard issue by the Actions user that lists the
// open governed issues; a second dispatch edits it.
func TestDashboardModeOnWorkflowDispatch(t *testing.T) {
	t.Parallel()
	s := giteatest.Require(t)
	bin := buildGuard(t, t.TempDir())
	owner, name := s.NewRepo(t)
	runner := s.RepoRunner(t, owner, name)
	r := &repo{t: t, srv: s, runner: runner, owner: owner, name: name, bin: bin, deadline: time.Now().Add(waitBudget)}
	gen, err := guardWorkflow(readActionSpec(t), bin, map[string]string{"mode": "dashboard"})
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	if err := yaml.Unmarshal(gen, &wf); err != nil {
		t.Fatal(err)
	}
	wf.Name, wf.RunName, wf.Concurrency = "gns-guard-dashboard", "gns-guard dashboard ${{ github.event_name }}", nil
	wf.On = map[string]trigger{"workflow_dispatch": {}}
	out, err := yaml.Marshal(wf)
	if err != nil {
		t.Fatal(err)
	}
	r.putFile(".gitea/workflows/gns-guard-dashboard.yml", out)

	std := []label{r.createLabel("cascade::depth-2"), r.createLabel("size::medium")}
	r.openIssue(1, "Rate limiting", numbered(t, example(t, "healthy.md"), 1), std...)
	r.openIssue(2, "A question", "No checkpoint here.")

	first := r.dispatchDashboard(1)
	if first.Conclusion != "success" {
		t.Fatalf("the dashboard run ended %s\n%s", first, r.jobLog(first))
	}
	boards := r.dashboards()
	if len(boards) != 1 || !strings.Contains(boards[0].Body, "| `#1` |") || strings.Contains(boards[0].Body, "| `#2` |") || boards[0].State != "open" {
		t.Fatalf("dashboards after the first run: %+v\n%s", boards, r.jobLog(first))
	}
	if log := r.jobLog(first); !strings.Contains(log, fmt.Sprintf("dashboard issue #%d created", boards[0].Number)) {
		t.Errorf("the log does not say the dashboard was created:\n%s", log)
	}

	// One more governed issue, and the second run edits the same issue.
	r.openIssue(boards[0].Number+1, "Caching", numbered(t, example(t, "healthy.md"), boards[0].Number+1), std...)
	second := r.dispatchDashboard(2)
	if second.Conclusion != "success" {
		t.Fatalf("the second dashboard run ended %s\n%s", second, r.jobLog(second))
	}
	again := r.dashboards()
	if len(again) != 1 || again[0].Number != boards[0].Number || !strings.Contains(again[0].Body, fmt.Sprintf("| `#%d` |", boards[0].Number+1)) {
		t.Fatalf("dashboards after the second run: %+v", again)
	}
	if log := r.jobLog(second); !strings.Contains(log, fmt.Sprintf("dashboard issue #%d edited", boards[0].Number)) {
		t.Errorf("the log does not say the dashboard was edited:\n%s", log)
	}
}

// dispatchDashboard starts the dashboard workflow on main and waits for
// its want-th run to finish.
func (r *repo) dispatchDashboard(want int) giteatest.WorkflowRun {
	r.t.Helper()
	r.must(http.MethodPost, r.path("/actions/workflows/%s/dispatches", "gns-guard-dashboard.yml"), map[string]any{"ref": "main"}, nil)
	for {
		var runs []giteatest.WorkflowRun
		for _, run := range r.runs() {
			if strings.HasPrefix(run.Title, "gns-guard dashboard") {
				runs = append(runs, run)
			}
		}
		if len(runs) >= want && runs[want-1].Status == "completed" {
			return runs[want-1]
		}
		if time.Now().After(r.deadline) {
			r.t.Fatalf("gave up waiting for dashboard run %d; runs so far:\n%s\n--- runner output ---\n%s", want, giteatest.RunList(runs), r.runner.LogTail())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

type dashboardIssue struct {
	Number int64  `json:"number"`
	Body   string `json:"body"`
	State  string `json:"state"`
	User   struct {
		Login string `json:"login"`
	} `json:"user"`
}

// dashboards are the issues with the marker by the Actions user.
func (r *repo) dashboards() []dashboardIssue {
	r.t.Helper()
	var all, out []dashboardIssue
	r.must(http.MethodGet, r.path("/issues?state=all&type=issues&limit=50"), nil, &all)
	for _, is := range all {
		if strings.Contains(is.Body, dashboardMarker) && is.User.Login == "gitea-actions" {
			out = append(out, is)
		}
	}
	return out
}

// UnmarshalYAML reads a trigger: a mapping (with types) or, for schedule,
// a list of cron entries, which names no types.
func (tr *trigger) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.SequenceNode {
		*tr = trigger{}
		return nil
	}
	type plain trigger
	return n.Decode((*plain)(tr))
}
