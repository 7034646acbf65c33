package action_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// openPull commits files on a new branch through the contents API and
// opens a pull request from it as the administrator.
func openPull(t *testing.T, f *actiontest.Repo, branch string, files ...string) (int64, actiontest.Delivery) {
	t.Helper()
	for i, path := range files {
		in := map[string]string{
			"content": base64.StdEncoding.EncodeToString([]byte("# " + path + "\n")),
			"message": "add " + path,
			"branch":  "main",
		}
		if i == 0 {
			in["new_branch"] = branch
		} else {
			in["branch"] = branch
		}
		f.API(t, f.Admin().Token, http.MethodPost, f.Path("/contents/%s", path), in, nil)
	}
	var pr struct {
		Number int64 `json:"number"`
	}
	f.API(t, f.Admin().Token, http.MethodPost, f.Path("/pulls"), map[string]string{"head": branch, "base": "main", "title": "change " + branch}, &pr)
	return pr.Number, f.Runs.Next(t, actiontest.From("pull_request_target", "opened", pr.Number, f.S.AdminLogin))
}

// protected-path: a pull request changing .kilo/ fails and gets
// permission::violation until permission::evolve-system is set; one that
// changes nothing protected passes without a write.
func TestProtectedPath(t *testing.T) {
	f := newFakeFixture(t)
	n, d := f.OpenPull(t, "evolve", "docs/notes.md", ".kilo/agents/reviewer.md")
	r := f.Run(t, d)
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "protected-path")
	if v := r.Violations(t)[0]; !strings.Contains(v.Message, `".kilo/agents/reviewer.md"`) || strings.Contains(v.Message, "docs/notes.md") {
		t.Errorf("the violation must name the protected file and only it: %s", v.Message)
	}
	if !f.Issue(t, n).Has("permission::violation") {
		t.Fatalf("permission::violation was not set on the pull request\n%s", r.String())
	}
	status := f.Status(t, n)
	r = f.Run(t, d)
	r.Expect(t, 1, "fail")
	if len(r.Writes) != 0 {
		t.Errorf("a re-run on an unchanged pull request wrote %q", r.Writes)
	}
	f.Status(t, n) // still exactly one

	// A person allows the change.
	d = f.AddLabels(t, "pull_request_target", n, "permission::evolve-system")
	if d.Event != "pull_request_target" {
		t.Fatalf("a label on a pull request arrived as %s", d.Event)
	}
	r = f.Run(t, d)
	r.Expect(t, 0, "pass")
	if got := f.Status(t, n); got.ID != status.ID || !strings.Contains(got.Body, "all clear") {
		t.Errorf("status comment %d (was %d):\n%s", got.ID, status.ID, got.Body)
	}
	if !f.Issue(t, n).Has("permission::violation") {
		t.Error("the guard removed permission::violation; only a person may")
	}

	// protected-paths configures the prefixes.
	r = f.Run(t, d, "protected-paths", "docs/\n.github/")
	r.Expect(t, 0, "pass") // the evolve-system label allows any protected change

	// A pull request with nothing protected passes; its first run posts
	// the status comment that holds its record (its labels by id), and a
	// re-run writes nothing.
	n2, d2 := f.OpenPull(t, "docs", "docs/more.md")
	r = f.Run(t, d2)
	r.Expect(t, 0, "pass")
	if len(r.Writes) != 1 || f.Issue(t, n2).Comments != 1 || !strings.Contains(f.Status(t, n2).Body, "<!-- gns-guard:ledger v2 {") {
		t.Errorf("the first run on a pull request with nothing protected wrote %q; want its record", r.Writes)
	}
	r = f.Run(t, d2)
	r.Expect(t, 0, "pass")
	if len(r.Writes) != 0 {
		t.Errorf("a re-run on a pull request with nothing protected wrote %q", r.Writes)
	}
	r = f.Run(t, d2, "protected-paths", "docs/")
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "protected-path")
}

// protected-path on every event of a pull request the guard sees, not
// only on the pull request's own: a label, an edit of its description and
// a comment judge its files too, and fail until an approver adds
// permission::evolve-system (a comment on a pull request was once skipped
// as "not governed", a green run on a pull request that changes .kilo/).
func TestProtectedPathOnEveryPullEvent(t *testing.T) {
	f := newFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	n, _ := openPull(t, f, "every-event", ".kilo/rules/global.md")
	check := func(what string, d actiontest.Delivery) {
		t.Helper()
		r := f.Run(t, d)
		r.Expect(t, 1, "fail")
		r.ExpectRules(t, "protected-path")
		if v := r.Violations(t)[0]; !strings.Contains(v.Message, `".kilo/rules/global.md"`) {
			t.Errorf("%s: the violation must name the protected file: %s", what, v.Message)
		}
	}
	ids := actiontest.LabelIDs(t, f.S, f.Owner, f.Name, "size::small")
	f.API(t, agent.Token, http.MethodPost, f.Path("/issues/%d/labels", n), map[string]any{"labels": ids}, nil)
	check("a label", f.Runs.Next(t, actiontest.From("pull_request_target", "label_updated", n, agent.Login)))
	_, d := f.Comment(t, n, agent, "Looks done to me.")
	check("a comment", d)
	f.API(t, agent.Token, http.MethodPatch, f.Path("/pulls/%d", n), map[string]string{"body": "now with a description"}, nil)
	check("an edit", f.Runs.Next(t, actiontest.From("pull_request_target", "edited", n, agent.Login)))
	if !f.Issue(t, n).Has("permission::violation") {
		t.Error("permission::violation was not set on the pull request")
	}

	// An approver's label opens the paths; a comment then passes.
	f.Run(t, f.AddLabels(t, "pull_request_target", n, "permission::evolve-system")).Expect(t, 0, "pass")
	_, d = f.Comment(t, n, agent, "Thanks.")
	f.Run(t, d).Expect(t, 0, "pass")
}
