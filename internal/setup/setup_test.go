package setup

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/gns-guard/gns-guard/internal/testkit"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
)

// readExample reads a file of the source tree.
func readExample(t *testing.T, path string) string {
	t.Helper()
	root, err := testkit.Root()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The workflows init writes are the example workflows users copy.
func TestWorkflowIsTheExample(t *testing.T) {
	example := readExample(t, "examples/workflows/gns-guard.yml")
	if string(workflowTemplate) != example {
		t.Fatal("internal/setup/template/workflow.yml differs from examples/workflows/gns-guard.yml: copy the example over it (go:embed cannot reach outside the package)")
	}
	host := readExample(t, "examples/workflows/gns-guard-host.yml")
	if string(hostWorkflowTemplate) != host {
		t.Fatal("internal/setup/template/workflow-host.yml differs from examples/workflows/gns-guard-host.yml: copy the example over it")
	}
}

// The labels init creates: the guard's own, the depth limits, the sizes
// and evolve-system, each with a color and a description.
func TestLabels(t *testing.T) {
	var got []string
	color := regexp.MustCompile(`^[0-9a-f]{6}$`)
	for _, s := range Labels() {
		got = append(got, s.Name)
		if !color.MatchString(s.Color) || !strings.HasPrefix(s.Description, "gns-guard: ") || len(s.Description) > 200 {
			t.Errorf("%s: color %q, description %q", s.Name, s.Color, s.Description)
		}
	}
	want := []string{}
	for _, s := range config.DefaultLabels().Specs() {
		want = append(want, s.Name)
	}
	want = append(want, "cascade::depth-0", "cascade::depth-1", "cascade::depth-2", "cascade::depth-3", "cascade::depth-n",
		"size::tiny", "size::small", "size::medium", "size::large", "permission::evolve-system")
	if !slices.Equal(got, want) {
		t.Errorf("labels %v\nwant %v", got, want)
	}
}

// Run on a user's repository: a dry run plans the commit, the pull
// request and every label and writes nothing; the run makes them in that
// order, and the team is a step by hand (a user has no teams).
func TestRun(t *testing.T) {
	s := fakeforge.New("alice/proj")
	w := live.Where{Verb: "init", Server: "http://gitea.test", Repo: "alice/proj"}
	ctx := context.Background()
	dry, err := Run(ctx, s.As("alice"), w, Options{DryRun: true, Runner: RunnerDocker})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Writes()) != 0 || !dry.Changed || len(dry.Writes) != 2+len(Labels()) || dry.Pull == nil || dry.Pull.State != StateCreate {
		t.Fatalf("dry run: writes %v, report %+v", s.Writes(), dry)
	}
	rep, err := Run(ctx, s.As("alice"), w, Options{Runner: RunnerDocker})
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, w := range s.Writes() {
		if !slices.Contains(methods, w.Method) {
			methods = append(methods, w.Method)
		}
	}
	if !slices.Equal(methods, []string{"CommitFiles", "CreatePull", "CreateLabel"}) || rep.Pull.Number == 0 || rep.Commit.SHA == "" {
		t.Errorf("writes %v; report %+v", methods, rep)
	}
	if got := s.Files(Branch)[settings.FileName]; !bytes.Equal(got, Settings(nil)) {
		t.Errorf("the settings on %s:\n%s", Branch, got)
	}
	if i := slices.IndexFunc(rep.Posture, func(p PostureStep) bool { return strings.Contains(p.What, "organisation team") }); i < 0 || rep.Posture[i].State != StateByHand {
		t.Errorf("posture %+v", rep.Posture)
	}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gns-guard init: alice/proj on http://gitea.test, default branch main\n", "Pull request #", "write(s) made.\n", "Next steps:\n  1. "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the text lacks %q:\n%s", want, b.String())
		}
	}
}
