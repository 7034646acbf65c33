package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/posture"
	"github.com/gns-guard/gns-guard/internal/scopes"
	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/gns-guard/gns-guard/internal/setup"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
)

// The files init writes, as package setup makes them.
var (
	workflowTemplate = setup.Workflow(setup.RunnerDocker)
	configTemplate   = setup.Settings(nil)
	issueTemplate    = setup.IssueTemplate()
)

// selfDigest is the SHA-256 of the running test binary, the one
// `init --runner host` pins.
func selfDigest() string {
	path, err := os.Executable()
	if err != nil {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// newSetupServer is alice/proj, an organisation's repository with a
// README on main, where the posture init builds is in place already: the
// agents' team (alice among them) with the repository, and main protected
// with the guard's check (of either workflow).
func newSetupServer() *fakeforge.Server {
	s := fakeforge.New("alice/proj")
	s.Org = true
	s.AddTeam(port.Team{Name: setup.AgentsTeam, Units: setup.AgentUnits()}, true, "alice")
	var checks []string
	for _, r := range []string{setup.RunnerDocker, setup.RunnerHost} {
		c, _ := posture.StatusContext(setup.WorkflowPath, setup.Workflow(r))
		checks = append(checks, c)
	}
	s.Protect(port.BranchRule{Name: "main", StatusCheck: true, Contexts: checks})
	return s
}

// setupWrites are the writes init made on s, one a line: a commit (its
// branch and paths), a pull request (its branches and body), a label.
func setupWrites(s *fakeforge.Server) []string {
	var out []string
	for _, w := range s.Writes() {
		switch w.Method {
		case "CommitFiles":
			out = append(out, "commit "+w.Text)
		case "CreatePull":
			out = append(out, "pull "+w.Text)
		case "CreateLabel":
			out = append(out, "label "+w.Text)
		default:
			out = append(out, w.String())
		}
	}
	return out
}

// merge merges the one open pull request: its branch's files land on its
// base.
func merge(t *testing.T, s *fakeforge.Server) {
	t.Helper()
	pulls := s.OpenPulls()
	if len(pulls) != 1 {
		t.Fatalf("%d open pull requests, want 1", len(pulls))
	}
	s.Merge(pulls[0].Number)
}

// useSetupServer makes the verbs talk to s, as alice.
func useSetupServer(t *testing.T, s *fakeforge.Server) {
	t.Helper()
	old := connectForge
	t.Cleanup(func() { connectForge = old })
	connectForge = func(server, token, owner, repo string) (port.Forge, error) {
		if owner+"/"+repo != s.Repo() {
			return nil, fmt.Errorf("no repository %s/%s", owner, repo)
		}
		return s.As("alice"), nil
	}
}

var initArgs = []string{"init", "--repo", "alice/proj", "--server", "http://gitea.test", "--token", "t0ken"}

func initJSON(t *testing.T, args ...string) (setup.Report, int) {
	t.Helper()
	stdout, stderr, code := runCLI(t, nil, "", append(append(slices.Clone(initArgs), "--format", "json"), args...)...)
	var rep setup.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("exit %d, not a report (%v):\n%s%s", code, err, stdout, stderr)
	}
	return rep, code
}

// init --runner host writes the workflow that runs the binary, says to
// install it on the runner's host, and requires the same check; a runner
// it does not know is a usage error.
func TestInitRunnerHost(t *testing.T) {
	s := newSetupServer()
	useSetupServer(t, s)
	rep, code := initJSON(t, "--runner", "host", "--commit")
	if code != 0 || rep.Runner != setup.RunnerHost {
		t.Fatalf("exit %d, runner %q", code, rep.Runner)
	}
	if got := s.Files("main")[setup.WorkflowPath]; !bytes.Equal(got, setup.Workflow(setup.RunnerHost)) || selfDigest() == "" || !bytes.Contains(got, []byte(`GNS_GUARD_SHA256: "`+selfDigest()+`"`)) {
		t.Errorf("init --runner host wrote another workflow than the example with this binary's digest %s pinned:\n%s", selfDigest(), got)
	}
	if !strings.Contains(rep.Next[0], "Install gns-guard on the runner's host") || !strings.Contains(rep.Next[0], "go install github.com/gns-guard/gns-guard/cmd/gns-guard@") {
		t.Errorf("the first next step is not the binary's install: %q", rep.Next)
	}
	if rep, _ := initJSON(t); rep.Runner != setup.RunnerDocker || len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "is not the file init writes") {
		t.Errorf("init (docker) over the host workflow: runner %q, notes %q; want the file left as it is, said", rep.Runner, rep.Notes)
	}
	if _, stderr, code := runCLI(t, nil, "", append(slices.Clone(initArgs), "--runner", "kubernetes")...); code != 2 || !strings.Contains(stderr, "init: --runner must be docker or host, not \"kubernetes\"") {
		t.Errorf("--runner kubernetes: exit %d, %s", code, stderr)
	}
}

// The starter settings file is one the guard reads: it sets a few
// settings and comments the others.
func TestInitConfigResolves(t *testing.T) {
	l, err := settings.FileLayer(settings.FileName, configTemplate)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Values) == 0 {
		t.Error("the starter file sets no setting")
	}
	res, err := settings.Resolve(l)
	if err != nil {
		t.Fatal(err)
	}
	def, err := settings.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	// The settings it sets are the defaults, shown where one edits them.
	if res.Config.PruneThreshold != def.Config.PruneThreshold || res.Config.PressureThreshold != def.Config.PressureThreshold ||
		!slices.Equal(res.Config.ProtectedPaths, def.Config.ProtectedPaths) {
		t.Errorf("the starter file changes a default: %+v", res.Config)
	}
	// Its opening comment names the settings the workflow's inputs
	// override.
	header, _, _ := strings.Cut(string(configTemplate), "\n\n")
	for key := range workflowInputs(t) {
		if s, ok := settings.Lookup(key); ok && s.File && !strings.Contains(header, key) {
			t.Errorf("the workflow sets %s, which overrides the file; the starter file's opening comment does not say so:\n%s", key, header)
		}
	}
	// Every commented setting is a key the file may hold, and uncommented
	// with its example value it still resolves.
	var uncommented []string
	suggestion := regexp.MustCompile(`^# ([a-z][a-z-]*):(.*)$`)
	for _, line := range strings.Split(string(configTemplate), "\n") {
		m := suggestion.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		key, value := m[1], m[2]
		s, known := settings.Lookup(key)
		if !known || !s.File {
			t.Errorf("the starter file suggests %q, which is not a key of the file", key)
		}
		uncommented = append(uncommented, key+":"+value)
	}
	if len(uncommented) < 3 {
		t.Fatalf("the starter file suggests %d commented settings, want a few: %q", len(uncommented), uncommented)
	}
	all, err := settings.FileLayer(settings.FileName, []byte(string(configTemplate)+strings.Join(uncommented, "\n")+"\n"))
	if err == nil {
		_, err = settings.Resolve(all)
	}
	if err != nil {
		t.Errorf("the starter file with its suggestions uncommented: %v", err)
	}
}

// workflowInputs are the inputs the workflow init writes gives the guard's
// step.
func workflowInputs(t *testing.T) map[string]string {
	t.Helper()
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(workflowTemplate, &wf); err != nil {
		t.Fatal(err)
	}
	for _, j := range wf.Jobs {
		for _, st := range j.Steps {
			if strings.HasPrefix(st.Uses, "gns-guard/gns-guard@") {
				return st.With
			}
		}
	}
	t.Fatal("the workflow has no gns-guard step")
	return nil
}

// splitFrontMatter splits a Markdown issue template into its front matter
// and the body Gitea puts in a new issue.
func splitFrontMatter(t *testing.T, tmpl string) (front map[string]any, body string) {
	t.Helper()
	rest, ok := strings.CutPrefix(tmpl, "---\n")
	if !ok {
		t.Fatal("the issue template does not start with front matter")
	}
	fm, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		t.Fatal("the issue template's front matter is not closed")
	}
	if err := yaml.Unmarshal([]byte(fm), &front); err != nil {
		t.Fatalf("front matter: %v", err)
	}
	return front, body
}

// The issue template names itself, sets labels init creates, and its body
// holds a checkpoint with every required key that passes `check` once its
// issue number is filled in.
func TestInitIssueTemplatePassesCheck(t *testing.T) {
	front, body := splitFrontMatter(t, string(issueTemplate))
	if front["name"] != issues.TaskTemplate || front["about"] == "" || front["about"] == nil {
		t.Errorf("front matter: %v", front)
	}
	var labels []string
	for _, l := range front["labels"].([]any) {
		labels = append(labels, l.(string))
	}
	created := map[string]bool{}
	for _, s := range setup.Labels() {
		created[s.Name] = true
	}
	for _, l := range labels {
		if !created[l] {
			t.Errorf("the template sets label %s, which init does not create", l)
		}
	}
	if len(labels) == 0 {
		t.Error("the template sets no label")
	}

	// Every required key of schema v2 is there to fill in.
	var doc struct {
		Checkpoint map[string]any `yaml:"checkpoint"`
	}
	_, block, ok := strings.Cut(body, "```yaml\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("no ```yaml block in the template")
	}
	if err := yaml.Unmarshal([]byte(block), &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"version", "issue", "phase", "depth", "last_agent", "last_invocation", "budget.total", "budget.consumed",
		"budget.remaining", "state.labels", "state.assignee", "next_agent", "next_estimated_tokens", "created_at"} {
		m := doc.Checkpoint
		parts := strings.Split(key, ".")
		for _, p := range parts[:len(parts)-1] {
			m, _ = m[p].(map[string]any)
		}
		if _, ok := m[parts[len(parts)-1]]; !ok {
			t.Errorf("the checkpoint lacks the required key %s", key)
		}
	}

	// It passes as the repository init sets up judges it: the starter
	// settings under the inputs the workflow gives.
	const n = 7
	filled := strings.Replace(body, "  issue: 0\n", fmt.Sprintf("  issue: %d\n", n), 1)
	if filled == body {
		t.Fatal("the template has no `issue: 0` to fill in")
	}
	files := map[string]string{"issue.md": filled, "template.md": strings.Replace(string(issueTemplate), "  issue: 0\n", "  issue: 7\n", 1),
		"gns-guard.yml": string(configTemplate)}
	judge := []string{"--config", "gns-guard.yml", "--issue", fmt.Sprint(n), "--labels", strings.Join(labels, ",")}
	for key, value := range workflowInputs(t) {
		if s, ok := settings.Lookup(key); ok && s.Flag {
			judge = append(judge, "--"+key, value)
		}
	}
	// The workflow gives only the secrets: every setting is the file's.
	for key := range workflowInputs(t) {
		if s, ok := settings.Lookup(key); ok && s.File {
			t.Errorf("the workflow sets %s, which belongs in .gitea/gns-guard.yml", key)
		}
	}
	for _, name := range []string{"issue.md", "template.md"} {
		stdout, stderr, code := runCLI(t, files, "", append(append([]string{"check", "--format", "json"}, judge...), name)...)
		var rep checkReport
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("%s: exit %d: %v\n%s", name, code, err, stderr)
		}
		if code != 0 || !rep.Valid || rep.Errors != 0 || rep.Warnings != 0 {
			t.Errorf("%s: exit %d, %d error(s), %d warning(s): %+v", name, code, rep.Errors, rep.Warnings, rep.Findings)
		}
		// A new issue's first run writes the status comment and nothing else.
		for _, w := range rep.Plan {
			if !strings.Contains(w, "status comment") {
				t.Errorf("%s: the guard would %s", name, w)
			}
		}
	}
	// As given, the template's issue: 0 is the placeholder the guard's
	// first run sets: no error, one planned write.
	files["b.md"] = body
	stdout, _, code := runCLI(t, files, "", append(append([]string{"check"}, judge...), "b.md")...)
	if code != 0 || !strings.Contains(stdout, "the action would set checkpoint.issue from the template's placeholder 0 to 7") {
		t.Errorf("as given: exit %d:\n%s", code, stdout)
	}
	// Any other wrong number is an error that says which number it expects.
	files["c.md"] = strings.Replace(body, "  issue: 0\n", "  issue: 3\n", 1)
	stdout, _, code = runCLI(t, files, "", append(append([]string{"check"}, judge...), "c.md")...)
	if code != exitcode.Violation || !strings.Contains(stdout, "expected this issue's number 7, found 3") {
		t.Errorf("a wrong number: exit %d:\n%s", code, stdout)
	}
}

// A first run proposes the three files in a pull request and creates the
// labels; a second changes nothing and says so; after the merge, neither
// does a third.
func TestInitFirstAndSecondRun(t *testing.T) {
	s := newSetupServer()
	useSetupServer(t, s)
	s.AddLabel(port.RepoLabel{ID: 1, Name: "size::small", Color: "000000", Description: "ours"})

	stdout, stderr, code := runCLI(t, nil, "", initArgs...)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d:\n%s%s", code, stdout, stderr)
	}
	t.Logf("first run:\n%s", stdout)
	if len(setupWrites(s)) != 2+len(setup.Labels())-1 {
		t.Errorf("%d writes, want a commit, a pull request and %d labels: %q", len(setupWrites(s)), len(setup.Labels())-1, setupWrites(s))
	}
	if want := "commit gns-guard-init: " + setup.WorkflowPath + " " + settings.FileName + " " + setup.IssueTemplatePath; setupWrites(s)[0] != want {
		t.Errorf("first write %q, want %q", setupWrites(s)[0], want)
	}
	for path, want := range map[string][]byte{setup.WorkflowPath: workflowTemplate, settings.FileName: configTemplate, setup.IssueTemplatePath: issueTemplate} {
		if !bytes.Equal(s.Files(setup.Branch)[path], want) {
			t.Errorf("%s on %s is not the template", path, setup.Branch)
		}
		if _, ok := s.Files("main")[path]; ok {
			t.Errorf("%s was written to main", path)
		}
	}
	if !strings.HasPrefix(setupWrites(s)[1], "pull gns-guard-init→main: ") || !strings.Contains(setupWrites(s)[1], "GNS_GUARD_LEDGER_KEY") {
		t.Errorf("second write %q, want the pull request", setupWrites(s)[1])
	}
	for _, l := range s.Labels() {
		if l.Name == "size::small" && (l.Color != "000000" || l.Description != "ours") {
			t.Errorf("an existing label was changed: %+v", l)
		}
	}
	for _, want := range []string{
		"gns-guard init: alice/proj on http://gitea.test, default branch main\n",
		"Files, proposed in a pull request from gns-guard-init into main:\n",
		"  .gitea/workflows/gns-guard.yml     written on gns-guard-init\n",
		"  commit " + s.Head(setup.Branch)[:10] + " on gns-guard-init\n",
		"Pull request #1, opened: http://gitea.test/alice/proj/pulls/1\n",
		"  cascade::depth-exceeded    #b60205  created\n",
		"  size::small                #000000  already there, left as it is\n",
		fmt.Sprintf("\n%d write(s) made.\n", len(setupWrites(s))),
		"  1. Set the Actions secret GNS_GUARD_LEDGER_KEY (repository Settings → Actions → Secrets: http://gitea.test/alice/proj/settings/actions/secrets) to the output of `gns-guard keygen`",
		"  2. Set the Actions secret GNS_GUARD_ADMIN_TOKEN to the repository owner's token (scopes " + scopes.Admin.List() + ")",
		"  3. Merge pull request #1: http://gitea.test/alice/proj/pulls/1\n",
		`  4. Then open an issue from the "GNS task" template (http://gitea.test/alice/proj/issues/new/choose)`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the first run's output lacks %q", want)
		}
	}

	writes := len(setupWrites(s))
	stdout, stderr, code = runCLI(t, nil, "", initArgs...)
	if code != 0 || stderr != "" || len(setupWrites(s)) != writes {
		t.Fatalf("second run: exit %d, writes %q:\n%s%s", code, setupWrites(s)[writes:], stdout, stderr)
	}
	t.Logf("second run:\n%s", stdout)
	for _, want := range []string{
		"  .gitea/gns-guard.yml               already there on gns-guard-init\n",
		"Pull request #1, already open: http://gitea.test/alice/proj/pulls/1\n",
		"  cascade::depth-exceeded    #b60205  already there, left as it is\n",
		"Nothing to change: the files are there, the pull request is open, and every label is present.\n",
		"  3. Merge pull request #1: http://gitea.test/alice/proj/pulls/1\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the second run's output lacks %q", want)
		}
	}
	rep, code := initJSON(t)
	if code != 0 || rep.Changed || len(rep.Writes) != 0 || rep.Commit != nil || rep.Pull == nil || rep.Pull.State != setup.StatePresent || rep.Pull.Number != 1 {
		t.Errorf("second run, JSON: exit %d, %+v", code, rep)
	}

	merge(t, s)
	stdout, _, code = runCLI(t, nil, "", initArgs...)
	if code != 0 || len(setupWrites(s)) != writes || strings.Contains(stdout, "Merge") || strings.Contains(stdout, "Pull request") {
		t.Fatalf("after the merge: exit %d, writes %q:\n%s", code, setupWrites(s)[writes:], stdout)
	}
	if !strings.Contains(stdout, "  .gitea/ISSUE_TEMPLATE/gns-task.md  already there on main\n") ||
		!strings.Contains(stdout, "Nothing to change: the files are there, and every label is present.\n") {
		t.Errorf("after the merge:\n%s", stdout)
	}
}

// A dry run reads, prints every write it would make, and writes nothing;
// --format json gives the same plan.
func TestInitDryRun(t *testing.T) {
	s := newSetupServer()
	useSetupServer(t, s)
	stdout, stderr, code := runCLI(t, nil, "", append(slices.Clone(initArgs), "--dry-run")...)
	if code != 0 || stderr != "" || len(setupWrites(s)) != 0 || len(s.Branches()) != 1 {
		t.Fatalf("exit %d, writes %q:\n%s%s", code, setupWrites(s), stdout, stderr)
	}
	for _, want := range []string{
		"  .gitea/workflows/gns-guard.yml     would be written on gns-guard-init\n",
		"Pull request from gns-guard-init into main: would be opened\n",
		"  permission::evolve-system  #e99695  would be created\n",
		fmt.Sprintf("Dry run: nothing was written. The %d write(s) init would make:\n", 2+len(setup.Labels())),
		"  - create the branch gns-guard-init from main with a commit of .gitea/workflows/gns-guard.yml, .gitea/gns-guard.yml, .gitea/ISSUE_TEMPLATE/gns-task.md\n",
		"  - open a pull request from gns-guard-init into main\n",
		"  - create the label cascade::depth-n (#1d4f91)\n",
		"  3. Merge the pull request from gns-guard-init into main.\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the dry run's output lacks %q:\n%s", want, stdout)
		}
	}

	rep, code := initJSON(t, "--dry-run")
	if code != 0 || len(setupWrites(s)) != 0 {
		t.Fatalf("exit %d, writes %q", code, setupWrites(s))
	}
	c := rep.Commit
	if !rep.DryRun || !rep.Changed || rep.Mode != "pull-request" || rep.DefaultBranch != "main" || len(rep.Writes) != 2+len(setup.Labels()) ||
		c == nil || c.Branch != setup.Branch || !c.NewBranch || c.From != "main" || c.SHA != "" || len(c.Files) != 3 ||
		rep.Pull == nil || rep.Pull.State != setup.StateCreate || rep.Pull.Number != 0 || len(rep.Next) != 7 {
		t.Errorf("%+v", rep)
	}
	for _, f := range rep.Files {
		if f.State != setup.StateCreate || f.Branch != setup.Branch {
			t.Errorf("file %+v", f)
		}
	}
	for _, l := range rep.Labels {
		if l.State != setup.StateCreate {
			t.Errorf("label %+v", l)
		}
	}
}

// --commit writes the files onto the default branch, with no branch and
// no pull request; a second run changes nothing.
func TestInitCommit(t *testing.T) {
	s := newSetupServer()
	useSetupServer(t, s)
	rep, code := initJSON(t, "--commit")
	if code != 0 || rep.Mode != "commit" || rep.Pull != nil || rep.Commit == nil || rep.Commit.Branch != "main" || rep.Commit.NewBranch || rep.Commit.SHA == "" {
		t.Fatalf("exit %d, %+v", code, rep)
	}
	if slices.Contains(s.Branches(), setup.Branch) || len(s.OpenPulls()) != 0 || !bytes.Equal(s.Files("main")[setup.IssueTemplatePath], issueTemplate) {
		t.Errorf("branches %v, pulls %v", s.Branches(), s.OpenPulls())
	}
	writes := len(setupWrites(s))
	stdout, _, code := runCLI(t, nil, "", append(slices.Clone(initArgs), "--commit")...)
	if code != 0 || len(setupWrites(s)) != writes || !strings.Contains(stdout, "Files, on main:\n") || !strings.Contains(stdout, "Nothing to change") {
		t.Errorf("second run: exit %d, writes %q:\n%s", code, setupWrites(s)[writes:], stdout)
	}
	// A repository with no commit yet takes --commit only.
	empty := newSetupServer()
	empty.Empty = true
	empty.DropBranches()
	useSetupServer(t, empty)
	_, stderr, code := runCLI(t, nil, "", initArgs...)
	if code != exitcode.Usage || !strings.Contains(stderr, "alice/proj has no commit yet") || !strings.Contains(stderr, "--commit") || len(empty.Writes()) != 0 {
		t.Errorf("empty repository: exit %d: %s", code, stderr)
	}
}

// What is already there is left as it is: a configuration file of the
// repository's own, a file edited on the init branch, a label of the same
// name.
func TestInitLeavesWhatIsThere(t *testing.T) {
	s := newSetupServer()
	useSetupServer(t, s)
	own := []byte("default-max-depth: 3\n")
	s.Files("main")[settings.FileName] = own
	maps.Copy(s.Files(setup.Branch), s.Files("main"))
	s.Files(setup.Branch)[setup.WorkflowPath] = []byte("# edited in review\n")
	rep, code := initJSON(t)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	want := []setup.FileState{
		{Path: settings.FileName, State: setup.StateDiffers, Branch: "main"},
		{Path: setup.WorkflowPath, State: setup.StateDiffers, Branch: setup.Branch},
		{Path: setup.IssueTemplatePath, State: setup.StateCreate, Branch: setup.Branch},
	}
	if !slices.Equal(rep.Files, want) {
		t.Errorf("files %+v\nwant %+v", rep.Files, want)
	}
	if len(rep.Notes) != 2 || !strings.Contains(rep.Notes[0], ".gitea/gns-guard.yml on main is not the file init writes") {
		t.Errorf("notes %q", rep.Notes)
	}
	if !bytes.Equal(s.Files("main")[settings.FileName], own) || string(s.Files(setup.Branch)[setup.WorkflowPath]) != "# edited in review\n" {
		t.Error("a file that was there was overwritten")
	}
	if setupWrites(s)[0] != "commit gns-guard-init: "+setup.IssueTemplatePath || !strings.HasPrefix(setupWrites(s)[1], "pull ") {
		t.Errorf("writes %q", setupWrites(s)[:2])
	}
	// The pull request lists the files it proposes, not the one on main.
	if strings.Contains(setupWrites(s)[1], settings.FileName) || !strings.Contains(setupWrites(s)[1], setup.WorkflowPath) {
		t.Errorf("pull request body: %s", setupWrites(s)[1])
	}
}

// Mistakes in the call are usage errors; a server that refuses is "could
// not run", saying what init was doing.
func TestInitErrors(t *testing.T) {
	s := newSetupServer()
	useSetupServer(t, s)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"init"}, exitcode.Usage, "init: --repo OWNER/NAME is required"},
		{[]string{"init", "--repo", "alice"}, exitcode.Usage, `init: --repo must be OWNER/NAME, not "alice"`},
		{[]string{"init", "--repo", "alice/proj"}, exitcode.Usage, "init: no server: pass --server URL or set GITHUB_SERVER_URL"},
		{append(slices.Clone(initArgs), "extra"), exitcode.Usage, "init takes no arguments, got extra"},
		{append(slices.Clone(initArgs), "--format", "yaml"), exitcode.Usage, `init: --format must be text or json, not "yaml"`},
		{[]string{"init", "--repo", "bob/proj", "--server", "http://gitea.test"}, exitcode.Usage, "init: no repository bob/proj"},
	} {
		stdout, stderr, code := runCLI(t, nil, "", c.args...)
		if code != c.code || stdout != "" || !strings.HasPrefix(stderr, "gns-guard: "+c.msg) {
			t.Errorf("%q: exit %d\n%s%s", c.args, code, stdout, stderr)
		}
	}
	if _, stderr, _ := runCLI(t, nil, "", "init", "--bogus"); !strings.HasSuffix(stderr, "Run 'gns-guard init -h' for usage.\n") {
		t.Errorf("usage hint: %q", stderr)
	}

	s.Inject(fakeforge.Fault{Method: "CreatePull", Err: fmt.Errorf("POST /api/v1/repos/alice/proj/pulls: %w", issues.ErrForbidden)})
	stdout, stderr, code := runCLI(t, nil, "", initArgs...)
	if code != exitcode.CannotRun || stdout != "" || !strings.Contains(stderr, "init: the token from --token may not open a pull request from gns-guard-init into main in alice/proj (HTTP 403): init needs a token with the scopes write:repository") {
		t.Errorf("refused: exit %d\n%s%s", code, stdout, stderr)
	}
	s.Heal()
	s.Inject(fakeforge.Fault{Method: "Repository", Err: fmt.Errorf("GET /api/v1/repos/alice/proj: %w", issues.ErrUnauthorized)})
	stdout, _, code = runCLI(t, nil, "", append(slices.Clone(initArgs), "--format", "json")...)
	var je exitcode.JSONError
	if err := json.Unmarshal([]byte(stdout), &je); err != nil || code != exitcode.CannotRun || je.Error.Kind != "cannot-run" ||
		!strings.Contains(je.Error.Message, "rejected the token from --token (HTTP 401) when trying to read the repository: it is wrong, expired or revoked") {
		t.Errorf("rejected token: exit %d, %v: %s", code, err, stdout)
	}
	s.Heal()
	s.Archived = true
	if _, stderr, code := runCLI(t, nil, "", initArgs...); code != exitcode.CannotRun || !strings.Contains(stderr, "alice/proj is archived") {
		t.Errorf("archived: exit %d: %s", code, stderr)
	}
}

// A dry run with a token that cannot write says the writes would be
// refused.
func TestInitDryRunWithoutWriteAccess(t *testing.T) {
	s := newSetupServer()
	s.Grant("alice", "read")
	useSetupServer(t, s)
	stdout, _, code := runCLI(t, nil, "", append(slices.Clone(initArgs), "--dry-run")...)
	if code != 0 || !strings.Contains(stdout, "Note: the token has no write access to alice/proj: the server will refuse these writes.\n") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}

// keygen prints a new key, 32 random bytes in hex, and nothing else.
func TestKeygen(t *testing.T) {
	hex64 := regexp.MustCompile(`^[0-9a-f]{64}\n$`)
	a, stderr, code := runCLI(t, nil, "", "keygen")
	b, _, _ := runCLI(t, nil, "", "keygen")
	if code != 0 || stderr != "" || !hex64.MatchString(a) || !hex64.MatchString(b) || a == b {
		t.Fatalf("exit %d: %q, %q (stderr %q)", code, a, b, stderr)
	}
	stdout, _, code := runCLI(t, nil, "", "keygen", "--format", "json")
	var rep map[string]string
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 0 || len(rep) != 1 || !hex64.MatchString(rep["ledger_key"]+"\n") {
		t.Errorf("exit %d, %v: %s", code, err, stdout)
	}
	if _, stderr, code := runCLI(t, nil, "", "keygen", "now"); code != exitcode.Usage || !strings.Contains(stderr, "keygen takes no arguments") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if stdout, _, code := runCLI(t, nil, "", "keygen", "-h"); code != 0 || !strings.HasPrefix(stdout, "Usage: gns-guard keygen") {
		t.Errorf("exit %d: %s", code, stdout)
	}
}

// pubkey prints the public key of the secret in $GNS_GUARD_LEDGER_KEY: one
// line, the value ledger-public-key takes, and it verifies what the secret
// signs.
func TestPubkey(t *testing.T) {
	run := func(vars map[string]string) (string, string, int) {
		env, out, errOut := pruneTestEnv(vars)
		code := Main(context.Background(), []string{"pubkey"}, env)
		return out.String(), errOut.String(), code
	}
	const secret = "c0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0de" // 64 hexadecimal digits
	stdout, stderr, code := run(map[string]string{LedgerKeyEnv: secret})
	if code != 0 || stdout != ledger.PublicKey([]byte(secret))+"\n" || stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	keys, err := ledger.NewKeys(nil, nil, strings.TrimSpace(stdout))
	if err != nil || !keys.Any() {
		t.Fatalf("the printed key does not parse: %v", err)
	}
	c := &issues.Comment{Author: issues.ActionsUser, Body: ledger.Encode(ledger.Record{Issue: 1}, []byte(secret))}
	if l, problem := ledger.Read(c, 1, keys); l == nil {
		t.Errorf("the public key does not verify the secret's record: %s", problem)
	}
	// A key weaker than 256 bits has no public key to publish: it would
	// let anyone guess the secret from it.
	if out, stderr, code := run(map[string]string{LedgerKeyEnv: "abc"}); code != exitcode.Usage || out != "" ||
		!strings.Contains(stderr, "256 bits") || !strings.Contains(stderr, "gns-guard keygen") || strings.Contains(stderr, "abc") {
		t.Errorf("a weak key: exit %d, stdout %q, stderr %q; want exit 2 naming the minimum and keygen", code, out, stderr)
	}
	if _, stderr, code := run(nil); code != exitcode.Usage || !strings.Contains(stderr, LedgerKeyEnv) {
		t.Errorf("no secret: exit %d, %q", code, stderr)
	}
}

// A second init repeats no step already done: the merged pull request,
// the secrets set and the public key published are said done, and the
// next steps are what is left. Its next steps leave the template's
// issue: 0 to the guard, as the template says.
func TestInitSecondRunSaysWhatIsDone(t *testing.T) {
	s := newSetupServer()
	useSetupServer(t, s)
	first, _ := initJSON(t)
	if len(first.Done) != 0 || !slices.ContainsFunc(first.Next, func(n string) bool { return strings.Contains(n, "Merge pull request #1") }) {
		t.Fatalf("the first init: done %q, next %q", first.Done, first.Next)
	}
	issueStep := first.Next[slices.IndexFunc(first.Next, func(n string) bool { return strings.Contains(n, "open an issue") })]
	_, body := splitFrontMatter(t, string(issueTemplate))
	if !strings.Contains(issueStep, "leave the checkpoint's issue: 0") || strings.Contains(issueStep, "set its checkpoint's issue") ||
		!strings.Contains(body, "`issue`: leave it at 0") {
		t.Errorf("the next step and the template disagree on issue: 0:\n%s\n%s", issueStep, body)
	}

	merge(t, s)
	s.Secrets = []string{"GNS_GUARD_LEDGER_KEY", "GNS_GUARD_ADMIN_TOKEN"}
	s.Files("main")[settings.FileName] = append(s.Files("main")[settings.FileName], []byte("ledger-public-key: ed25519:"+strings.Repeat("A", 43)+"=\n")...)
	stdout, _, code := runCLI(t, nil, "", initArgs...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	for _, want := range []string{"Already done:\n", "  - The Actions secret GNS_GUARD_LEDGER_KEY is set.\n", "  - The Actions secret GNS_GUARD_ADMIN_TOKEN is set.\n",
		"  - .gitea/gns-guard.yml publishes ledger-public-key.\n", "  1. Then open an issue", "GNS_GUARD_TOKEN", "gns-guard doctor"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the second init lacks %q:\n%s", want, stdout)
		}
	}
	next := stdout[strings.Index(stdout, "Next steps:"):]
	for _, bad := range []string{"GNS_GUARD_LEDGER_KEY", "GNS_GUARD_ADMIN_TOKEN", "Merge", "Publish"} {
		if strings.Contains(next, bad) {
			t.Errorf("the second init repeats a step done (%s):\n%s", bad, next)
		}
	}
}

// The template's size limits are the ones check prints and the guard
// applies: a small task's context, the share pressure-threshold allows,
// and the medium task's.
func TestIssueTemplateSizeLimits(t *testing.T) {
	_, body := splitFrontMatter(t, string(issueTemplate))
	text := strings.Join(strings.Fields(body), " ")
	m := regexp.MustCompile("`size::small` task's context is ([0-9]+) tokens .* over `pressure-threshold`, ([0-9.]+) of it: ([0-9]+) tokens. `size::medium`: ([0-9]+), so ([0-9]+).").FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("the template no longer states the small task's limits:\n%s", body)
	}
	def, err := settings.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	small, _ := issues.TaskSizeNamed("small")
	medium, _ := issues.TaskSizeNamed("medium")
	ratio := def.Config.PressureThreshold
	want := []string{fmt.Sprint(small.MaxContext), fmt.Sprint(ratio), fmt.Sprint(int64(float64(small.MaxContext) * ratio)),
		fmt.Sprint(medium.MaxContext), fmt.Sprint(int64(float64(medium.MaxContext) * ratio))}
	if !slices.Equal(m[1:], want) {
		t.Errorf("the template says %q, the guard %q", m[1:], want)
	}
	stdout, _, _ := runCLI(t, map[string]string{"t.md": body}, "", "check", "t.md", "--labels", "cascade::depth-2,size::small")
	if !strings.Contains(stdout, fmt.Sprintf(" of %d tokens (small task)", small.MaxContext)) {
		t.Errorf("check states another limit than the template's %d:\n%s", small.MaxContext, stdout)
	}
}

// TestInitAgentsMap: --agents takes LOGIN items (the team) and NAME=LOGIN
// items (the team, and the agents setting of the file init writes, which
// loads as the guard reads it); a bad item is a usage error.
func TestInitAgentsMap(t *testing.T) {
	o := &initOptions{runner: setup.RunnerDocker, agents: "orchestrator=agent, code-reviewer=rev-bot,guard-bot, tester=agent"}
	if err := o.parseAgents(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.logins, []string{"agent", "rev-bot", "guard-bot"}) {
		t.Errorf("team logins %q", o.logins)
	}
	want := map[string][]string{"orchestrator": {"agent"}, "code-reviewer": {"rev-bot"}, "tester": {"agent"}}
	if !maps.EqualFunc(o.mapped, want, slices.Equal) {
		t.Errorf("agents %v, want %v", o.mapped, want)
	}
	l, err := settings.FileLayer(settings.FileName, setup.Settings(o.mapped))
	if err != nil {
		t.Fatal(err)
	}
	r, err := settings.Resolve(l)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.EqualFunc(r.Config.Agents, want, slices.Equal) {
		t.Errorf("the file init writes loads agents %v, want %v:\n%s", r.Config.Agents, want, setup.Settings(o.mapped))
	}
	if !bytes.Equal(setup.Settings(nil), configTemplate) {
		t.Error("without NAME=LOGIN items the file is the template")
	}
	bad := &initOptions{agents: "code reviewer=bob"}
	if err := bad.parseAgents(); exitcode.Code(err) != exitcode.Usage {
		t.Errorf("a bad item: %v", err)
	}
}
