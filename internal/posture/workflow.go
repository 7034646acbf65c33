package posture

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// The events and activity types the guard's workflow must run on
// (examples/workflows/gns-guard.yml): pull requests through
// pull_request_target, which takes the workflow from the base branch.
var (
	issueTypes   = []string{"opened", "edited", "reopened", "labeled", "unlabeled"}
	commentTypes = []string{"created", "edited"}
	pullTypes    = []string{"opened", "edited", "reopened", "synchronize", "labeled", "unlabeled"}
)

// wfFile is what the judge reads of a workflow.
type wfFile struct {
	Name string           `yaml:"name"`
	On   yaml.Node        `yaml:"on"`
	Jobs map[string]wfJob `yaml:"jobs"`
}

type wfJob struct {
	Name  string   `yaml:"name"`
	Steps []wfStep `yaml:"steps"`
}

type wfStep struct {
	Uses string         `yaml:"uses"`
	With map[string]any `yaml:"with"`
	Run  string         `yaml:"run"`
	Env  map[string]any `yaml:"env"`
}

// guardWorkflow is the guard's workflow as read: its file, its triggers
// (event → activity types; nil types: every type), and the job and step
// that run the guard.
type guardWorkflow struct {
	wf       Workflow
	name     string
	triggers map[string][]string
	jobName  string
	step     wfStep
}

// findGuard is the first workflow (by path) with a step that uses the
// gns-guard action in its issue mode; nil when there is none. Files that
// are not YAML are skipped, as Gitea skips them.
func findGuard(wfs []Workflow) *guardWorkflow {
	sorted := slices.Clone(wfs)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	for _, w := range sorted {
		var f wfFile
		if yaml.Unmarshal(w.Content, &f) != nil {
			continue
		}
		ids := make([]string, 0, len(f.Jobs))
		for id := range f.Jobs {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			j := f.Jobs[id]
			for _, st := range j.Steps {
				if isGuardStep(st) {
					return &guardWorkflow{wf: w, name: firstNonEmpty(f.Name, path.Base(w.Path)),
						triggers: triggers(&f.On), jobName: firstNonEmpty(j.Name, id), step: st}
				}
			}
		}
	}
	return nil
}

// isGuardStep says a step runs the guard to guard issues (not its
// dashboard mode): it uses the gns-guard action (a repository or an image
// named gns-guard), or runs the binary's action verb (guardCommand).
func isGuardStep(st wfStep) bool {
	if !runsGuardAnyMode(st) {
		return false
	}
	mode, given := st.inputs()["mode"]
	return !given || mode == nil || fmt.Sprint(mode) == "" || fmt.Sprint(mode) == "issue"
}

// runsGuardAnyMode says a step runs the guard, in any mode.
func runsGuardAnyMode(st wfStep) bool {
	if st.Uses == "" {
		_, ok := guardCommand(st.Run)
		return ok
	}
	ref, _, _ := strings.Cut(strings.TrimPrefix(st.Uses, "docker://"), "@")
	ref, _, _ = strings.Cut(ref, ":")
	return slices.Contains(strings.Split(ref, "/"), "gns-guard")
}

// inputs are the guard's inputs as the step gives them: its with: for the
// action; for a step that runs the binary, the INPUT_ variables of its
// env:, named back as the runner names a Docker action's inputs
// (INPUT_LEDGER-KEY is ledger-key; the guard reads no other spelling).
func (st wfStep) inputs() map[string]any {
	if st.Uses != "" {
		return st.With
	}
	out := map[string]any{}
	for k, v := range st.Env {
		if name, ok := strings.CutPrefix(k, "INPUT_"); ok {
			out[strings.ToLower(name)] = v
		}
	}
	return out
}

// RunsGuard says a workflow file has a step that runs the guard, in any
// mode: uses the action, or runs the binary's action verb.
func RunsGuard(content []byte) bool {
	var f wfFile
	if yaml.Unmarshal(content, &f) != nil {
		return false
	}
	for _, j := range f.Jobs {
		if slices.ContainsFunc(j.Steps, runsGuardAnyMode) {
			return true
		}
	}
	return false
}

// triggers reads on: a name, a list, or names to filters.
func triggers(n *yaml.Node) map[string][]string {
	out := map[string][]string{}
	switch n.Kind {
	case yaml.ScalarNode:
		out[n.Value] = nil
	case yaml.SequenceNode:
		for _, e := range n.Content {
			out[e.Value] = nil
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			out[n.Content[i].Value] = activityTypes(n.Content[i+1])
		}
	}
	return out
}

// activityTypes are a filter's types:; nil means all.
func activityTypes(n *yaml.Node) []string {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != "types" {
			continue
		}
		v := n.Content[i+1]
		if v.Kind == yaml.ScalarNode {
			return []string{v.Value}
		}
		types := []string{}
		for _, e := range v.Content {
			types = append(types, e.Value)
		}
		return types
	}
	return nil
}

// missingTypes are wanted types event lacks; all if not a trigger.
func (g *guardWorkflow) missingTypes(event string, want []string) ([]string, bool) {
	types, ok := g.triggers[event]
	if !ok {
		return want, false
	}
	if types == nil {
		return nil, true
	}
	var missing []string
	for _, t := range want {
		if !slices.Contains(types, t) {
			missing = append(missing, t)
		}
	}
	return missing, true
}

// statusContext is the commit status Gitea gives the guard's job on a
// pull_request_target run: "<workflow name> / <job name> (pull_request_target)"
// (services/actions/commit_status.go). A fork's own workflow can only
// make "… (pull_request)" statuses.
func (g *guardWorkflow) statusContext() string {
	return fmt.Sprintf("%s / %s (pull_request_target)", g.name, g.jobName)
}

var (
	secretRef  = regexp.MustCompile(`secrets\.([A-Za-z_][A-Za-z0-9_]*)`)
	commitRef  = regexp.MustCompile(`^[0-9a-f]{40}$`)
	digestRef  = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)
	releaseRef = regexp.MustCompile(`^v[0-9]+(\.[0-9]+){0,2}$`)
)

// secretInputs maps input to secret name, upper-cased as Gitea stores it.
func (g *guardWorkflow) secretInputs() map[string]string {
	out := map[string]string{}
	for in, v := range g.step.inputs() {
		if m := secretRef.FindStringSubmatch(fmt.Sprint(v)); m != nil {
			out[in] = strings.ToUpper(m[1])
		}
	}
	return out
}

// pinned says whether the step's action names one image for good, and
// how; for a step that runs the binary, whether the binary is one an
// account with Code write cannot swap (hostCommandPinned).
func (g *guardWorkflow) pinned() (bool, string) {
	uses := g.step.Uses
	if uses == "" {
		cmd, _ := guardCommand(g.step.Run)
		if runnerTemp(cmd.binary) {
			return g.digestPinned(cmd.binary)
		}
		return cmd.pinned()
	}
	if strings.HasPrefix(uses, "docker://") {
		if digestRef.MatchString(uses) {
			return true, fmt.Sprintf("the guard's image is pinned by digest (%s)", uses)
		}
		return false, fmt.Sprintf("the guard's image %s is named by a tag, which can be pushed again: pin it by digest (docker://…@sha256:…)", uses)
	}
	_, ref, _ := strings.Cut(uses, "@")
	switch {
	case commitRef.MatchString(ref):
		return true, fmt.Sprintf("the guard's action is pinned to a commit (%s)", uses)
	case releaseRef.MatchString(ref):
		return true, fmt.Sprintf("the guard's action is a release (%s), whose action.yml names its image by digest", uses)
	}
	return false, fmt.Sprintf("the guard's action %s follows a branch or an unknown ref: whoever pushes to it changes the guard; use "+
		"a release (@v1) or a commit", uses)
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// StatusContext is the commit status the guard's job in the workflow file
// at path gets on a pull_request_target run, the context the default
// branch's protection must require; false when the file runs no guard.
func StatusContext(path string, content []byte) (string, bool) {
	g := findGuard([]Workflow{{Path: path, Content: content}})
	if g == nil {
		return "", false
	}
	return g.statusContext(), true
}

// runnerTemp says a binary path lies in the job's temporary directory,
// where the host workflow puts the copy of the binary it checked.
func runnerTemp(binary string) bool {
	return strings.HasPrefix(binary, "$RUNNER_TEMP/") || strings.HasPrefix(binary, "${RUNNER_TEMP}/")
}

// sha256Hex is a SHA-256 in hexadecimal.
var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// digestPinned judges a step that runs a copy of the host's binary in the
// job's temporary directory (the host workflow): the binary is fixed when
// the step's GNS_GUARD_SHA256 pins a digest and its script checks the copy
// against it with sha256sum before it runs it.
func (g *guardWorkflow) digestPinned(binary string) (bool, string) {
	digest := strings.TrimSpace(fmt.Sprint(g.step.Env["GNS_GUARD_SHA256"]))
	switch {
	case !strings.Contains(g.step.Run, "sha256sum") || !strings.Contains(g.step.Run, "GNS_GUARD_SHA256"):
		return false, fmt.Sprintf("the guard's step runs %s, a copy in the job's temporary directory, without checking its SHA-256: pin "+
			"the binary's digest as the host workflow does", binary)
	case !sha256Hex.MatchString(digest) || strings.Trim(digest, "0") == "":
		return false, "the guard's step checks the binary against GNS_GUARD_SHA256, which pins no binary's digest: set it to the " +
			"SHA-256 of the gns-guard installed on the runner's host (sha256sum prints it)"
	}
	return true, fmt.Sprintf("the guard's step runs only the binary whose SHA-256 the workflow pins (%s…)", digest[:12])
}
