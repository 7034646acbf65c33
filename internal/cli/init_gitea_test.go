package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/setup"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// initRepo is a fresh repository on the real Gitea that `init` sets up,
// read back through the API as its owner.
type initRepo struct {
	t           *testing.T
	s           *giteatest.Server
	owner, name string
}

func newInitRepo(t *testing.T) *initRepo {
	t.Helper()
	s := giteatest.Require(t)
	owner, name := s.NewRepo(t)
	return &initRepo{t: t, s: s, owner: owner, name: name}
}

// init runs `gns-guard init` on the repository as its owner.
func (r *initRepo) init(args ...string) (string, string, int) {
	r.t.Helper()
	base := []string{"init", "--repo", r.owner + "/" + r.name, "--server", r.s.URL, "--token", r.s.AdminToken}
	return gns(r.t, nil, append(base, args...)...)
}

// initJSON is the part of `init --format json` the tests read.
type initJSON struct {
	Changed bool     `json:"changed"`
	DryRun  bool     `json:"dry_run"`
	Writes  []string `json:"writes"`
	Files   []struct {
		Path, State, Branch string
	} `json:"files"`
	Commit *struct {
		Branch string `json:"branch"`
		SHA    string `json:"sha"`
	} `json:"commit"`
	Pull *struct {
		State  string `json:"state"`
		Number int64  `json:"number"`
	} `json:"pull_request"`
	Labels []struct {
		Name, State string
	} `json:"labels"`
}

func (r *initRepo) initJSON(args ...string) initJSON {
	r.t.Helper()
	stdout, stderr, code := r.init(append(args, "--format", "json")...)
	var rep initJSON
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 0 {
		r.t.Fatalf("init %v: exit %d, %v\n%s%s", args, code, err, stdout, stderr)
	}
	return rep
}

// api sends a request as the repository's owner to a path under the
// repository; a 404 is returned as false.
func (r *initRepo) api(method, path string, in, out any) bool {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := r.s.API(ctx, r.s.AdminToken, method, "/repos/"+url.PathEscape(r.owner)+"/"+url.PathEscape(r.name)+path, in, out)
	if err != nil && strings.Contains(err.Error(), "HTTP 404") {
		return false
	}
	if err != nil {
		r.t.Fatal(err)
	}
	return true
}

type giteaLabel struct {
	Name, Color, Description string
}

func (r *initRepo) labels() []giteaLabel {
	r.t.Helper()
	var ls []giteaLabel
	r.api(http.MethodGet, "/labels?limit=50", nil, &ls)
	return ls
}

type giteaPull struct {
	Number int64 `json:"number"`
	Head   struct {
		Ref string `json:"ref"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
	} `json:"base"`
}

func (r *initRepo) openPulls() []giteaPull {
	r.t.Helper()
	var ps []giteaPull
	r.api(http.MethodGet, "/pulls?state=open", nil, &ps)
	return ps
}

// file reads a file of a branch; false when it is not there.
func (r *initRepo) file(ref, path string) (string, bool) {
	r.t.Helper()
	var s string
	ok := r.api(http.MethodGet, "/raw/"+path+"?ref="+url.QueryEscape(ref), nil, &s)
	return s, ok
}

// branchCommit is the id of a branch's head commit; "" when there is no
// such branch.
func (r *initRepo) branchCommit(name string) string {
	r.t.Helper()
	var b struct {
		Commit struct {
			ID string `json:"id"`
		} `json:"commit"`
	}
	if !r.api(http.MethodGet, "/branches/"+url.PathEscape(name), nil, &b) {
		return ""
	}
	return b.Commit.ID
}

// wantLabels checks that the repository has exactly the labels init
// creates, with their colors and descriptions.
func (r *initRepo) wantLabels() {
	r.t.Helper()
	got := r.labels()
	want := setup.Labels()
	if len(got) != len(want) {
		r.t.Fatalf("%d labels, want %d: %v", len(got), len(want), got)
	}
	for _, w := range want {
		i := slices.IndexFunc(got, func(l giteaLabel) bool { return l.Name == w.Name })
		if i < 0 {
			r.t.Errorf("label %s was not created", w.Name)
			continue
		}
		if g := got[i]; strings.TrimPrefix(g.Color, "#") != w.Color || g.Description != w.Description {
			r.t.Errorf("label %s: color %s, %q; want %s, %q", w.Name, g.Color, g.Description, w.Color, w.Description)
		}
	}
}

// On a real Gitea: a dry run writes nothing; init opens the pull request
// with the three files and creates the labels; a second init changes
// nothing.
func TestInitGitea(t *testing.T) {
	t.Parallel()
	start := time.Now()
	r := newInitRepo(t)
	head := r.branchCommit("main")

	dry := r.initJSON("--dry-run")
	if !dry.DryRun || !dry.Changed || len(dry.Writes) != 2+len(setup.Labels()) || dry.Pull == nil || dry.Pull.Number != 0 {
		t.Errorf("dry run: %+v", dry)
	}
	if r.branchCommit(setup.Branch) != "" || len(r.labels()) != 0 || len(r.openPulls()) != 0 || r.branchCommit("main") != head {
		t.Fatal("the dry run wrote something")
	}

	stdout, stderr, code := r.init()
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d:\n%s%s", code, stdout, stderr)
	}
	t.Logf("first run:\n%s", stdout)
	pulls := r.openPulls()
	if len(pulls) != 1 || pulls[0].Head.Ref != setup.Branch || pulls[0].Base.Ref != "main" {
		t.Fatalf("open pull requests %+v, want one from %s into main", pulls, setup.Branch)
	}
	n := pulls[0].Number
	if want := fmt.Sprintf("Pull request #%d, opened: %s/%s/%s/pulls/%d\n", n, r.s.URL, r.owner, r.name, n); !strings.Contains(stdout, want) {
		t.Errorf("the output lacks %q:\n%s", want, stdout)
	}
	var files []struct {
		Filename string `json:"filename"`
		Status   string `json:"status"`
	}
	r.api(http.MethodGet, fmt.Sprintf("/pulls/%d/files", n), nil, &files)
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Filename+" "+f.Status)
	}
	slices.Sort(paths)
	if want := []string{".gitea/ISSUE_TEMPLATE/gns-task.md added", ".gitea/gns-guard.yml added", ".gitea/workflows/gns-guard.yml added"}; !slices.Equal(paths, want) {
		t.Errorf("the pull request changes %v, want %v", paths, want)
	}
	for path, want := range map[string]string{setup.WorkflowPath: readFile(t, "../setup/template/workflow.yml"), ".gitea/gns-guard.yml": readFile(t, "../setup/template/config.yml"), setup.IssueTemplatePath: readFile(t, "../setup/template/gns-task.md")} {
		if got, ok := r.file(setup.Branch, path); !ok || got != want {
			t.Errorf("%s on %s is not the template (found: %v)", path, setup.Branch, ok)
		}
		if _, ok := r.file("main", path); ok {
			t.Errorf("%s was written to main", path)
		}
	}
	if r.branchCommit("main") != head {
		t.Error("main moved")
	}
	r.wantLabels()

	// Again: nothing to change, and it says so.
	branch := r.branchCommit(setup.Branch)
	again := r.initJSON()
	if again.Changed || len(again.Writes) != 0 || again.Commit != nil || again.Pull == nil || again.Pull.State != "present" || again.Pull.Number != n {
		t.Errorf("second run: %+v", again)
	}
	for _, l := range again.Labels {
		if l.State != "present" {
			t.Errorf("second run: label %+v", l)
		}
	}
	stdout, _, _ = r.init()
	t.Logf("second run:\n%s", stdout)
	if !strings.Contains(stdout, "Nothing to change: the files are there, the pull request is open, and every label is present.\n") {
		t.Errorf("the second run does not say it changed nothing:\n%s", stdout)
	}
	if r.branchCommit(setup.Branch) != branch || len(r.openPulls()) != 1 || len(r.labels()) != len(setup.Labels()) {
		t.Error("the second run wrote something")
	}
	t.Logf("TestInitGitea took %s", time.Since(start).Round(time.Millisecond))
}

// init --commit writes the files onto the default branch, where Gitea
// offers the issue template; a second run changes nothing.
func TestInitCommitGitea(t *testing.T) {
	t.Parallel()
	r := newInitRepo(t)
	rep := r.initJSON("--commit")
	if !rep.Changed || rep.Commit == nil || rep.Commit.Branch != "main" || rep.Commit.SHA != r.branchCommit("main") || rep.Pull != nil {
		t.Fatalf("%+v", rep)
	}
	if r.branchCommit(setup.Branch) != "" || len(r.openPulls()) != 0 {
		t.Error("--commit made a branch or a pull request")
	}
	for path, want := range map[string]string{setup.WorkflowPath: readFile(t, "../setup/template/workflow.yml"), ".gitea/gns-guard.yml": readFile(t, "../setup/template/config.yml"), setup.IssueTemplatePath: readFile(t, "../setup/template/gns-task.md")} {
		if got, ok := r.file("main", path); !ok || got != want {
			t.Errorf("%s on main is not the template (found: %v)", path, ok)
		}
	}
	r.wantLabels()

	// Gitea reads the template: its name, its labels, and the body a new
	// issue starts with.
	var templates []struct {
		Name    string   `json:"name"`
		About   string   `json:"about"`
		Labels  []string `json:"labels"`
		Content string   `json:"content"`
		File    string   `json:"file_name"`
	}
	r.api(http.MethodGet, "/issue_templates", nil, &templates)
	if len(templates) != 1 || templates[0].Name != "GNS task" || templates[0].About == "" || templates[0].File != setup.IssueTemplatePath ||
		!slices.Equal(templates[0].Labels, []string{"cascade::depth-2", "size::small"}) || !strings.Contains(templates[0].Content, "```yaml\ncheckpoint:\n") ||
		strings.HasPrefix(templates[0].Content, "---") {
		t.Errorf("Gitea's issue templates: %+v", templates)
	}

	head := r.branchCommit("main")
	again := r.initJSON("--commit")
	if again.Changed || len(again.Writes) != 0 || r.branchCommit("main") != head {
		t.Errorf("second run: %+v", again)
	}
}

// A repository with no commit yet: init refuses to open a pull request
// (there is no branch to open it against) and --commit makes its first
// commit.
func TestInitEmptyRepoGitea(t *testing.T) {
	t.Parallel()
	s := giteatest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var created struct {
		Name  string `json:"name"`
		Owner struct {
			Login string `json:"login"`
		} `json:"owner"`
	}
	if err := s.API(ctx, s.AdminToken, http.MethodPost, "/user/repos", map[string]any{"name": fmt.Sprintf("init-empty-%d", time.Now().UnixNano()), "auto_init": false}, &created); err != nil {
		t.Fatal(err)
	}
	r := &initRepo{t: t, s: s, owner: created.Owner.Login, name: created.Name}
	_, stderr, code := r.init()
	if code != 2 || !strings.Contains(stderr, "has no commit yet") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	rep := r.initJSON("--commit")
	if !rep.Changed || rep.Commit == nil || rep.Commit.SHA == "" {
		t.Fatalf("%+v", rep)
	}
	if got, ok := r.file(rep.Commit.Branch, setup.IssueTemplatePath); !ok || got != readFile(t, "../setup/template/gns-task.md") {
		t.Errorf("the issue template on %s: found %v", rep.Commit.Branch, ok)
	}
	if again := r.initJSON("--commit"); again.Changed {
		t.Errorf("second run: %+v", again)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
