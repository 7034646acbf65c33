package action_test

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/rhysd/actionlint"
)

// workflowFiles are the workflows people copy (examples/workflows) and the
// project's own (.gitea/workflows).
func workflowFiles(t *testing.T) (root string, files []string) {
	t.Helper()
	root, err := testkit.Root()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"examples/workflows", ".gitea/workflows"} {
		for _, ext := range []string{"*.yml", "*.yaml"} {
			m, err := filepath.Glob(filepath.Join(root, dir, ext))
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, m...)
		}
	}
	if len(files) < 3 {
		t.Fatalf("expected the example workflows and the CI workflow, found %v", files)
	}
	return root, files
}

// Every shipped workflow passes actionlint with its default checks (no
// shellcheck or pyflakes binaries are assumed).
func TestWorkflowsPassActionlint(t *testing.T) {
	root, files := workflowFiles(t)
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{WorkingDir: root})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.LintFiles(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		rel, _ := filepath.Rel(root, e.Filepath)
		t.Errorf("%s:%d:%d: %s [%s]", rel, e.Line, e.Column, e.Message, e.Kind)
	}
}

// The examples pass only inputs action.yml declares: a misspelt input is
// silently ignored by the runner, so the guard would run with a default the
// user did not choose.
func TestWorkflowsUseDeclaredInputs(t *testing.T) {
	_, files := workflowFiles(t)
	ins, err := actiontest.Inputs()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, in := range ins {
		names = append(names, in.Name)
	}
	guardSteps := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		wf, errs := actionlint.Parse(data)
		for _, e := range errs {
			t.Errorf("%s:%d:%d: %s", filepath.Base(f), e.Line, e.Column, e.Message)
		}
		if wf == nil {
			continue
		}
		for _, job := range wf.Jobs {
			for _, st := range job.Steps {
				exec, ok := st.Exec.(*actionlint.ExecAction)
				if !ok || exec.Uses == nil || !strings.Contains(exec.Uses.Value, "gns-guard") {
					continue
				}
				guardSteps++
				for _, in := range exec.Inputs {
					if !slices.Contains(names, in.Name.Value) {
						t.Errorf("%s:%d:%d: input %q is not declared in action.yml (inputs: %s)",
							filepath.Base(f), in.Name.Pos.Line, in.Name.Pos.Col, in.Name.Value, strings.Join(names, ", "))
					}
				}
			}
		}
	}
	if guardSteps == 0 {
		t.Fatal("no workflow step uses gns-guard: the examples no longer show how to run it")
	}
}
