package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// initBudget bounds the waiting of TestInitEndToEnd: its two runs take a
// few seconds on an idle machine.
const initBudget = 3 * time.Minute

// TestInitEndToEnd adopts the guard the way a new user does, and checks
// that it governs: `gns-guard init` proposes the workflow, the settings
// and the issue template in a pull request and creates the labels; the
// ledger key `gns-guard keygen` makes becomes the Actions secret; the
// pull request is merged; an issue opened from the template, its issue
// number filled in, is judged by the guard through the real runner, which
// passes it and records a signed ledger.
func TestInitEndToEnd(t *testing.T) {
	t.Parallel()
	start := time.Now()
	s := giteatest.Require(t)
	bin := buildGuard(t, t.TempDir())
	owner, name := s.NewRepo(t)
	runner := s.RepoRunner(t, owner, name)
	r := &repo{t: t, srv: s, runner: runner, owner: owner, name: name, bin: bin, deadline: time.Now().Add(initBudget)}

	r.adopt()

	tmpl, labels := r.template()
	const n = 2 // init's pull request took #1: issues and pull requests share numbers
	body := replaceOnce(t, tmpl.Content, "  issue: 0\n", fmt.Sprintf("  issue: %d\n", n))
	r.openIssue(n, "Rate limits for the public API", body, labels...)

	runs := r.waitRuns(n, 2)
	wantOpened(t, runs, "success")
	is := r.issue(n)
	if !slices.Equal(is.labelNames(), names(labels)) || withoutHint(is.Body) != body || is.IsLocked {
		t.Errorf("the guard changed a healthy issue (but for its read hint): labels %v, body changed %v, locked %v", is.labelNames(), withoutHint(is.Body) != body, is.IsLocked)
	}
	status := statusComment(t, r.comments(n), n)
	if !strings.Contains(status.Body, "all clear") || !strings.Contains(status.Body, "<!-- gns-guard:ledger ") || strings.Contains(status.Body, "sig=unsigned") {
		t.Errorf("want the status comment all clear, with a ledger signed by the secret's key:\n%s", status.Body)
	}
	if log := r.jobLog(runs[1]); !strings.Contains(log, "outputs: result=pass ") {
		t.Errorf("the run does not report a pass:\n%s", log)
	}
	// The issue's two are the only runs: init's pull request ran nothing,
	// since pull_request_target runs the base branch's copy of the
	// workflow, which it was adding; and the guard's own writes started
	// none.
	if all := r.runs(); len(all) != 2 {
		t.Errorf("%d workflow runs, want the issue's two:\n%s", len(all), giteatest.RunList(all))
	}
	t.Logf("init, merge and a governed issue in %s", time.Since(start).Round(time.Millisecond))
}

// adopt does what init asks of a new user: `gns-guard init` with the
// owner's token proposes the workflow, the settings and the issue template
// in the repository's first pull request; the key `gns-guard keygen`
// prints and the owner's token become the Actions secrets; the pull
// request is merged. The runner here runs jobs on the host and cannot start
// the action's container, so the workflow init wrote (uses:
// gns-guard/gns-guard@v1) is then adapted exactly as the other tests of
// this package adapt the example workflow: guardWorkflow runs the guard's
// binary with the inputs the runner would give the Docker action, and the
// workflow's own `with:` carried over. Its triggers must include the ones
// the generated workflow keeps.
func (r *repo) adopt(initArgs ...string) (key string) {
	t := r.t
	t.Helper()
	out := r.gns(append([]string{"init", "--repo", r.owner + "/" + r.name, "--server", r.srv.URL, "--token", r.initTokenOr()}, initArgs...)...)
	const pull = 1 // the repository's first pull request
	for _, want := range []string{
		fmt.Sprintf("Pull request #%d, opened: %s/%s/%s/pulls/%d\n", pull, r.srv.URL, r.owner, r.name, pull),
		"Set the Actions secret GNS_GUARD_LEDGER_KEY",
		"Set the Actions secret GNS_GUARD_ADMIN_TOKEN",
		"`gns-guard keygen`",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("init's output lacks %q:\n%s", want, out)
		}
	}
	key = strings.TrimSuffix(r.gns("keygen"), "\n")
	if len(key) != 64 || strings.ContainsAny(key, "\n ") {
		t.Fatalf("keygen printed %q, want one line of 64 hex digits", key)
	}
	r.setSecret("GNS_GUARD_LEDGER_KEY", key)
	r.setSecret("GNS_GUARD_ADMIN_TOKEN", r.ownerToken())
	r.mergePull(pull)

	const wfPath = ".gitea/workflows/gns-guard.yml"
	var written workflow
	if err := yaml.Unmarshal([]byte(r.rawFile("main", wfPath)), &written); err != nil {
		t.Fatalf("the workflow init wrote: %v", err)
	}
	for event, types := range map[string][]string{"issues": issueTypes, "issue_comment": commentTypes} {
		for _, typ := range types {
			if !slices.Contains(written.On[event].Types, typ) {
				t.Errorf("the workflow init wrote is not triggered by %s.%s", event, typ)
			}
		}
	}
	var with map[string]string
	for _, j := range written.Jobs {
		for _, st := range j.Steps {
			if strings.HasPrefix(st.Uses, "gns-guard/gns-guard@") {
				with = st.With
			}
		}
	}
	for input, secret := range map[string]string{"ledger-key": "GNS_GUARD_LEDGER_KEY", "admin-token": "GNS_GUARD_ADMIN_TOKEN"} {
		if want := "${{ secrets." + secret + " }}"; with[input] != want {
			t.Fatalf("the workflow init wrote passes %s %q, want %s", input, with[input], want)
		}
	}
	wf, err := guardWorkflow(readActionSpec(t), r.bin, with)
	if err != nil {
		t.Fatal(err)
	}
	r.replaceFile(wfPath, wf)
	return key
}

// initTokenOr is the token init is given: r.initToken, else the site
// administrator's.
func (r *repo) initTokenOr() string {
	if r.initToken != "" {
		return r.initToken
	}
	return r.srv.AdminToken
}

// template returns init's issue template as Gitea offers it to a person
// opening an issue, and the labels it sets (which init must have created).
func (r *repo) template() (issueTemplate, []label) {
	t := r.t
	t.Helper()
	var templates []issueTemplate
	r.must(http.MethodGet, r.path("/issue_templates"), nil, &templates)
	i := slices.IndexFunc(templates, func(x issueTemplate) bool { return x.Name == "GNS task" })
	if i < 0 {
		t.Fatalf("Gitea offers no \"GNS task\" template: %+v", templates)
	}
	tmpl := templates[i]
	var all []label
	r.must(http.MethodGet, r.path("/labels?limit=50"), nil, &all)
	var labels []label
	for _, n := range tmpl.Labels {
		k := slices.IndexFunc(all, func(l label) bool { return l.Name == n })
		if k < 0 {
			t.Fatalf("the template sets label %s, which init did not create", n)
		}
		labels = append(labels, all[k])
	}
	return tmpl, labels
}

// issueTemplate is an issue template as Gitea offers it.
type issueTemplate struct {
	Name    string   `json:"name"`
	Labels  []string `json:"labels"`
	Content string   `json:"content"`
}

// gns runs the guard's binary as a user runs it and returns its standard
// output; a failure fails the test.
func (r *repo) gns(args ...string) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("gns-guard %s: %v\n%s%s", args[0], err, out, stderr.String())
	}
	return string(out)
}

// mergePull merges pull request n, as its Merge button does. Gitea checks
// a new pull request's mergeability in the background and refuses the
// merge until it has (HTTP 405, "try again later").
func (r *repo) mergePull(n int64) {
	r.t.Helper()
	for {
		err := r.call(http.MethodPost, r.path("/pulls/%d/merge", n), map[string]any{"Do": "merge"}, nil)
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "HTTP 405") || time.Now().After(r.deadline) {
			r.t.Fatalf("merging pull request #%d: %v", n, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// rawFile reads a file of a branch.
func (r *repo) rawFile(ref, path string) string {
	r.t.Helper()
	var s string
	r.must(http.MethodGet, r.path("/raw/%s?ref=%s", path, url.QueryEscape(ref)), nil, &s)
	return s
}

// replaceFile commits new content for a file of main.
func (r *repo) replaceFile(path string, content []byte) {
	r.t.Helper()
	var cur struct {
		SHA string `json:"sha"`
	}
	r.must(http.MethodGet, r.path("/contents/%s?ref=main", path), nil, &cur)
	r.must(http.MethodPut, r.path("/contents/%s", path), map[string]any{
		"content": base64.StdEncoding.EncodeToString(content),
		"sha":     cur.SHA,
		"message": "Run the guard's binary on the host runner",
		"branch":  "main",
	}, nil)
}
