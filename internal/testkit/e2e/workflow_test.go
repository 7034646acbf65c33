package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sethvargo/go-githubactions"
	"gopkg.in/yaml.v3"
)

// repoRoot is the repository's top directory, seen from this package.
const repoRoot = "../../.."

// guardStepID is the id of the guard's step in the generated workflow.
const guardStepID = "guard"

// actionInput is one input of action.yml.
type actionInput struct {
	Description string `yaml:"description"`
	Required    bool   `yaml:"required"`
	Default     string `yaml:"default"`
}

// actionSpec is what the workflow has to mirror of action.yml.
type actionSpec struct {
	Inputs  map[string]actionInput `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
	} `yaml:"outputs"`
	Runs struct {
		Using string            `yaml:"using"`
		Image string            `yaml:"image"`
		Args  []string          `yaml:"args"`
		Env   map[string]string `yaml:"env"`
	} `yaml:"runs"`
}

func readActionSpec(t testing.TB) actionSpec {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var spec actionSpec
	if err := yaml.Unmarshal(b, &spec); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if len(spec.Inputs) == 0 {
		t.Fatal("action.yml declares no inputs")
	}
	return spec
}

// workflow is the part of a workflow file these tests write and read.
type workflow struct {
	Name        string             `yaml:"name"`
	RunName     string             `yaml:"run-name,omitempty"`
	On          map[string]trigger `yaml:"on"`
	Concurrency *concurrency       `yaml:"concurrency,omitempty"`
	Jobs        map[string]job     `yaml:"jobs"`
}

type trigger struct {
	Types []string `yaml:"types,omitempty"`
}

type concurrency struct {
	Group            string `yaml:"group"`
	CancelInProgress bool   `yaml:"cancel-in-progress"`
}

type job struct {
	RunsOn string `yaml:"runs-on"`
	Steps  []step `yaml:"steps"`
}

type step struct {
	Name  string            `yaml:"name,omitempty"`
	ID    string            `yaml:"id,omitempty"`
	If    string            `yaml:"if,omitempty"`
	Uses  string            `yaml:"uses,omitempty"`
	With  map[string]string `yaml:"with,omitempty"`
	Shell string            `yaml:"shell,omitempty"`
	Env   map[string]string `yaml:"env,omitempty"`
	Run   string            `yaml:"run,omitempty"`
}

// The events the guard's workflow runs on (docs/contract.md §1), less pull
// requests: the end-to-end tests work on issues.
var (
	issueTypes   = []string{"opened", "edited", "reopened", "labeled", "unlabeled"}
	commentTypes = []string{"created", "edited"}
)

// inputEnv is the variable through which the Gitea runner hands an input to
// a Docker action: INPUT_ and the input's name upper-cased, with every
// character outside A-Z, 0-9 and '-' replaced by '_' (as the runner's
// populateEnvsFromInput and Step.GetEnv do). A '-' stays a '-'.
func inputEnv(name string) string {
	return "INPUT_" + regexp.MustCompile(`[^A-Z0-9-]`).ReplaceAllString(strings.ToUpper(name), "_")
}

// runTitle is the run-name of the generated workflow, by which the tests
// tell the runs of one issue and one event apart.
const runTitle = "gns-guard #${{ github.event.issue.number }} ${{ github.event_name }}.${{ github.event.action }}"

// outputsLine is what the workflow's second step prints: some of the
// guard's outputs, as a later step of a user's workflow reads them.
const outputsLine = "outputs: result=${{ steps.guard.outputs.result }} pruned=${{ steps.guard.outputs.pruned }} budget-remaining=${{ steps.guard.outputs.budget-remaining }}"

// guardWorkflow generates the test repository's workflow from action.yml:
// the triggers and per-issue concurrency of examples/workflows/gns-guard.yml,
// a step that runs binary with the action's arguments and every input set
// to its action.yml default, under the variable the runner would set for
// the Docker action (the runner evaluates ${{ }} in both places the same
// way), and a step that prints some outputs. with sets inputs as a step's
// with: does, in place of their defaults.
func guardWorkflow(spec actionSpec, binary string, with map[string]string) ([]byte, error) {
	if spec.Runs.Using != "docker" {
		return nil, fmt.Errorf("action.yml runs using %q; the workflow generator mirrors a Docker action", spec.Runs.Using)
	}
	env := map[string]string{}
	for name, in := range spec.Inputs {
		key := inputEnv(name)
		if _, dup := env[key]; dup {
			return nil, fmt.Errorf("action.yml: two inputs map to %s", key)
		}
		env[key] = in.Default
	}
	for key, v := range spec.Runs.Env {
		if _, dup := env[key]; dup {
			return nil, fmt.Errorf("action.yml: runs.env sets %s, which an input sets too", key)
		}
		env[key] = v
	}
	for name, v := range with {
		if _, ok := spec.Inputs[name]; !ok {
			return nil, fmt.Errorf("action.yml has no input %q", name)
		}
		env[inputEnv(name)] = v
	}
	run := []string{shellQuote(binary)}
	for _, a := range spec.Runs.Args {
		run = append(run, shellQuote(a))
	}
	wf := workflow{
		Name:    "gns-guard",
		RunName: runTitle,
		On: map[string]trigger{
			"issues":        {Types: issueTypes},
			"issue_comment": {Types: commentTypes},
		},
		Concurrency: &concurrency{Group: "gns-guard-${{ github.event.issue.number }}"},
		Jobs: map[string]job{
			"guard": {
				RunsOn: "ubuntu-latest",
				Steps: []step{{
					Name: "Guard the issue",
					ID:   guardStepID,
					Env:  env,
					Run:  "exec " + strings.Join(run, " "),
				}, {
					Name: "Show the outputs",
					If:   "always()",
					Run:  "echo " + shellQuote(outputsLine),
				}},
			},
		},
	}
	b, err := yaml.Marshal(wf)
	if err != nil {
		return nil, err
	}
	return append([]byte("# Generated from action.yml by the end-to-end tests: the guard's binary run\n# on the host with the inputs the runner would give its Docker action.\n"), b...), nil
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// TestWorkflowMatchesActionYML checks the generated workflow against
// action.yml: every input, and nothing else, reaches the binary under the
// name the runner uses and that the guard reads, with its default; the
// binary gets the action's arguments; the triggers and concurrency are the
// documented ones.
func TestWorkflowMatchesActionYML(t *testing.T) {
	spec := readActionSpec(t)
	const bin = "/opt/gns guard/bin's/gns-guard"
	out, err := guardWorkflow(spec, bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	if err := yaml.Unmarshal(out, &wf); err != nil {
		t.Fatalf("the generated workflow is not YAML: %v\n%s", err, out)
	}
	st := findStep(t, wf, guardStepID)

	var want []string
	for name, in := range spec.Inputs {
		key := inputEnv(name)
		want = append(want, key)
		got, ok := st.Env[key]
		if !ok {
			t.Errorf("input %s: the workflow does not set %s", name, key)
			continue
		}
		if got != in.Default {
			t.Errorf("input %s: %s is %q, action.yml's default is %q", name, key, got, in.Default)
			continue
		}
		// What the guard reads through the toolkit is what the runner set.
		gh := githubactions.New(githubactions.WithGetenv(func(k string) string { return st.Env[k] }))
		if v := gh.GetInput(name); v != strings.TrimSpace(in.Default) {
			t.Errorf("input %s: the guard would read %q, want the default %q (the runner's name %s and the toolkit's differ)", name, v, in.Default, key)
		}
	}
	for key, v := range spec.Runs.Env {
		want = append(want, key)
		if got := st.Env[key]; got != v {
			t.Errorf("runs.env %s: the workflow sets %q, action.yml sets %q", key, got, v)
		}
	}
	var have []string
	for k := range st.Env {
		have = append(have, k)
	}
	sort.Strings(want)
	sort.Strings(have)
	if !slices.Equal(have, want) {
		t.Errorf("the workflow sets %v, action.yml's inputs map to %v", have, want)
	}

	if len(spec.Runs.Args) == 0 {
		t.Error("action.yml passes the image no arguments; the binary needs the action subcommand")
	}
	wantRun := "exec " + shellQuote(bin)
	for _, a := range spec.Runs.Args {
		wantRun += " " + shellQuote(a)
	}
	if st.Run != wantRun {
		t.Errorf("run is %q, want %q", st.Run, wantRun)
	}

	if got := wf.On["issues"].Types; !slices.Equal(got, issueTypes) {
		t.Errorf("issues types %v, want %v", got, issueTypes)
	}
	if got := wf.On["issue_comment"].Types; !slices.Equal(got, commentTypes) {
		t.Errorf("issue_comment types %v, want %v", got, commentTypes)
	}
	if o := undeclaredOutputs(spec, string(out), guardStepID); len(o) > 0 {
		t.Errorf("the workflow reads outputs action.yml does not declare: %v", o)
	}
	if c := wf.Concurrency; c == nil || !strings.Contains(c.Group, "github.event.issue.number") || c.CancelInProgress {
		t.Errorf("concurrency %+v, want one group per issue that queues runs", c)
	}
}

// TestWorkflowWith checks that with sets exactly the inputs named, and
// only inputs action.yml declares.
func TestWorkflowWith(t *testing.T) {
	spec := readActionSpec(t)
	const admin = "${{ secrets.GNS_GUARD_ADMIN_TOKEN }}"
	out, err := guardWorkflow(spec, "/bin/gns-guard", map[string]string{"admin-token": admin})
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	if err := yaml.Unmarshal(out, &wf); err != nil {
		t.Fatal(err)
	}
	env := findStep(t, wf, guardStepID).Env
	for name, in := range spec.Inputs {
		want := in.Default
		if name == "admin-token" {
			want = admin
		}
		if got := env[inputEnv(name)]; got != want {
			t.Errorf("input %s is %q, want %q", name, got, want)
		}
	}
	if _, err := guardWorkflow(spec, "/bin/gns-guard", map[string]string{"admin_token": "x"}); err == nil {
		t.Error("an input action.yml does not declare was accepted")
	}
}

// TestDockerfileBuild checks that the binary the end-to-end tests build is
// built the way the action's image builds it, and that the image runs it.
func TestDockerfileBuild(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	for _, want := range []string{
		`ARG TAGS=nometer`,
		`RUN CGO_ENABLED=0 go build -tags "$TAGS" -trimpath -ldflags="-s -w" -o /out/gns-guard ./cmd/gns-guard`,
		`ENTRYPOINT ["/usr/local/bin/gns-guard"]`,
	} {
		if !strings.Contains(df, want) {
			t.Errorf("the Dockerfile no longer has %s; update buildGuard in this package to build the binary the same way", want)
		}
	}
}

// TestExamplesUseDeclaredInputs checks that every example workflow passes
// the guard only inputs action.yml declares and reads only outputs it
// declares.
func TestExamplesUseDeclaredInputs(t *testing.T) {
	spec := readActionSpec(t)
	files, err := filepath.Glob(filepath.Join(repoRoot, "examples", "workflows", "*.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no example workflows in examples/workflows")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var wf workflow
		if err := yaml.Unmarshal(b, &wf); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		guards := 0
		for jobName, j := range wf.Jobs {
			for i, st := range j.Steps {
				if !strings.HasPrefix(st.Uses, "gns-guard/gns-guard@") && st.Uses != "./" && st.ID != guardStepID {
					continue
				}
				guards++
				for in := range st.With {
					if _, ok := spec.Inputs[in]; !ok {
						t.Errorf("%s: job %s step %d passes input %q, which action.yml does not declare", f, jobName, i+1, in)
					}
				}
				for key := range st.Env {
					if hostStepVars[key] && st.Run != "" {
						continue // the host step's own: the binary it runs and its pinned digest
					}
					if _, ok := runnerNames(spec)[key]; !ok {
						t.Errorf("%s: job %s step %d sets %s, which is neither an input of action.yml as the runner names it nor a variable of its runs.env", f, jobName, i+1, key)
					}
				}
				if st.ID == "" {
					continue
				}
				for _, o := range undeclaredOutputs(spec, string(b), st.ID) {
					t.Errorf("%s: reads output %q of step %s, which action.yml does not declare", f, o, st.ID)
				}
			}
		}
		if guards == 0 {
			t.Errorf("%s: no step uses gns-guard/gns-guard", f)
		}
	}
}

// runnerNames are the variables a runner hands the action's container:
// each input's INPUT_ name, and runs.env's.
func runnerNames(spec actionSpec) map[string]bool {
	out := map[string]bool{}
	for name := range spec.Inputs {
		out[inputEnv(name)] = true
	}
	for key := range spec.Runs.Env {
		out[key] = true
	}
	return out
}

// hostStepVars are the variables the host workflow's step sets for
// itself, beyond what the runner hands the action's container: the
// binary it runs and the SHA-256 it pins (docs/operations.md#the-runner).
var hostStepVars = map[string]bool{"GNS_GUARD_BIN": true, "GNS_GUARD_SHA256": true}

// hostWorkflowPath is the example workflow for a runner without Docker.
const hostWorkflowPath = "examples/workflows/gns-guard-host.yml"

// TestHostWorkflowMatchesActionYML holds the host workflow to the Docker
// one and to action.yml: the guard's step runs the binary with the
// action's arguments, under bash, with exactly the variables the runner
// hands the action's container for the Docker workflow's step (each
// input of its with:, else action.yml's default, as INPUT_ and the
// runner's name; runs.env as action.yml writes it); everything else of
// the two workflows is the same.
func TestHostWorkflowMatchesActionYML(t *testing.T) {
	spec := readActionSpec(t)
	read := func(rel string) map[string]any {
		b, err := os.ReadFile(filepath.Join(repoRoot, rel))
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		return doc
	}
	docker, host := read("examples/workflows/gns-guard.yml"), read(hostWorkflowPath)
	dockerStep, hostStep := guardStepOf(t, docker), guardStepOf(t, host)

	want := map[string]any{}
	with, _ := dockerStep["with"].(map[string]any)
	for name, in := range spec.Inputs {
		switch v, ok := with[name]; {
		case ok:
			want[inputEnv(name)] = v
		case in.Default != "":
			want[inputEnv(name)] = in.Default
		}
	}
	for key, v := range spec.Runs.Env {
		want[key] = v
	}
	// Two variables more: the binary the step runs and the digest it
	// pins (docs/operations.md#the-runner).
	env, _ := hostStep["env"].(map[string]any)
	if env["GNS_GUARD_BIN"] != "gns-guard" || env["GNS_GUARD_SHA256"] != strings.Repeat("0", 64) {
		t.Errorf("the host step's GNS_GUARD_BIN and GNS_GUARD_SHA256: %v, %v; want gns-guard and the unpinned digest", env["GNS_GUARD_BIN"], env["GNS_GUARD_SHA256"])
	}
	delete(env, "GNS_GUARD_BIN")
	delete(env, "GNS_GUARD_SHA256")
	if !reflect.DeepEqual(env, want) {
		t.Errorf("the host step's env:\n%v\nwant what the runner hands the Docker step:\n%v", env, want)
	}
	run, _ := hostStep["run"].(string)
	if wantRun := "exec \"$RUNNER_TEMP/gns-guard\" " + strings.Join(spec.Runs.Args, " ") + "\n"; !strings.HasSuffix(run, wantRun) || hostStep["shell"] != "bash" {
		t.Errorf("the host step runs %q with shell %v, want it to end with %q, with bash (sh drops the INPUT_ names with hyphens)", run, hostStep["shell"], wantRun)
	}
	for _, k := range []string{"name", "id", "if"} {
		if hostStep[k] != dockerStep[k] {
			t.Errorf("the host step's %s is %v, the Docker step's %v", k, hostStep[k], dockerStep[k])
		}
	}
	// The rest is the Docker workflow's, step for step.
	for _, st := range []map[string]any{dockerStep, hostStep} {
		for _, k := range []string{"uses", "with", "run", "shell", "env"} {
			delete(st, k)
		}
	}
	if !reflect.DeepEqual(docker, host) {
		t.Errorf("the host workflow differs from the Docker one beyond the guard's step:\n%v\n%v", host, docker)
	}
}

// guardStepOf is the step with the guard's id in a parsed workflow.
func guardStepOf(t *testing.T, doc map[string]any) map[string]any {
	t.Helper()
	jobs, _ := doc["jobs"].(map[string]any)
	for _, j := range jobs {
		steps, _ := j.(map[string]any)["steps"].([]any)
		for _, st := range steps {
			if m, _ := st.(map[string]any); m["id"] == guardStepID {
				return m
			}
		}
	}
	t.Fatalf("no step with id %s", guardStepID)
	return nil
}

// undeclaredOutputs returns the outputs of step id that the workflow text
// reads and action.yml does not declare.
func undeclaredOutputs(spec actionSpec, text, id string) []string {
	var out []string
	re := regexp.MustCompile(`steps\.` + regexp.QuoteMeta(id) + `\.outputs\.([A-Za-z0-9_-]+)`)
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		if _, ok := spec.Outputs[m[1]]; !ok {
			out = append(out, m[1])
		}
	}
	return out
}

func findStep(t testing.TB, wf workflow, id string) step {
	t.Helper()
	for _, j := range wf.Jobs {
		for _, st := range j.Steps {
			if st.ID == id {
				return st
			}
		}
	}
	t.Fatalf("the workflow has no step with id %s", id)
	return step{}
}

// TestExamplesNameTheirRuns: every shipped workflow names its runs, the
// guard's after the issue (or pull request) and the event, so the Actions
// tab tells the runs of one issue apart.
func TestExamplesNameTheirRuns(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "examples", "workflows", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example workflows: %v", err)
	}
	const guardRun = "#${{ github.event.issue.number"
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var wf workflow
		if err := yaml.Unmarshal(b, &wf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		switch {
		case wf.RunName == "":
			t.Errorf("%s has no run-name", f)
		case wf.On["issues"].Types != nil && (!strings.Contains(wf.RunName, guardRun) || !strings.Contains(wf.RunName, "${{ github.event_name }}")):
			t.Errorf("%s names its runs %q, not after the issue and the event", f, wf.RunName)
		}
	}
}
