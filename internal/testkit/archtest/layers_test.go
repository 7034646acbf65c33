package archtest

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit"
)

const module = "github.com/gns-guard/gns-guard/"

// layers are the product's packages from the bottom up, as CONTRIBUTING.md
// draws them: a package imports only packages of lower layers. Every
// package under internal/ (but the test kit) and cmd/ has its line here.
var layers = [][]string{
	{"internal/exitcode", "internal/finding", "internal/markdown", "internal/tokens", "internal/jsoncap", "internal/version", "internal/secrets", "internal/scopes"},
	{"internal/checkpoint", "internal/agentcomment", "internal/burn", "internal/issues", "internal/posture", "internal/flagdoc"},
	{"internal/prune", "internal/entryload", "internal/receipt", "internal/port", "internal/config", "internal/access", "internal/issuetx"},
	{"internal/ledger"},
	{"internal/guard"},
	{"internal/status", "internal/settings", "internal/metering", "internal/offline"},
	{"internal/handoff"},
	{"internal/forge", "internal/meterstore", "internal/meterclient", "internal/fence"},
	{"internal/live"},
	{"internal/dashboard", "internal/setup", "internal/agentwrite", "internal/briefing", "internal/history"},
	{"internal/action", "internal/mcpserver", "internal/meter"},
	{"internal/cli"},
	{"cmd/gns-guard"},
}

// pure are the layers that do no I/O: the decision core and what it
// builds on. Above them the shell reads from and writes to Gitea.
const pureLayers = 7

// wiredIn are the packages only their wirers import: the Gitea adapter is
// wired in the command line and the binary (action mode), and every other
// package reaches the server through the roles of internal/port, so a test
// hands it the fake.
var wiredIn = map[string][]string{"internal/forge": {"internal/cli", "cmd/gns-guard"}}

// io are the imports a pure package must not have.
var io = []string{"net/http", "net/url", "os/exec", "os/signal", "code.gitea.io/sdk/gitea", "github.com/sethvargo/go-githubactions"}

func layerOf(pkg string) int {
	for i, l := range layers {
		if slices.Contains(l, pkg) {
			return i
		}
	}
	return -1
}

// TestLayers holds every package to its layer: no import runs sideways or
// up, the Gitea adapter is imported where it is wired only, and the pure
// layers import nothing that reaches the network, the process or the
// runner.
func TestLayers(t *testing.T) {
	root, err := testkit.Root()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range productPackages(t, root) {
		layer := layerOf(pkg)
		if layer < 0 {
			t.Errorf("%s has no layer: add it to layers in %s and to CONTRIBUTING.md's layout", pkg, "internal/testkit/archtest/layers_test.go")
			continue
		}
		bp, err := build.ImportDir(filepath.Join(root, pkg), 0)
		if err != nil {
			t.Fatal(err)
		}
		if bp.Doc == "" || !strings.HasPrefix(bp.Doc, "Package "+bp.Name+" ") && !strings.HasPrefix(bp.Doc, "Command ") {
			t.Errorf("%s: its doc.go must say what the package holds, starting \"Package %s\"", pkg, bp.Name)
		}
		for _, imp := range bp.Imports {
			if dep, ok := strings.CutPrefix(imp, module); ok {
				if l := layerOf(dep); l < 0 || l >= layer {
					t.Errorf("%s (layer %d) imports %s (layer %d): a package imports only lower layers", pkg, layer, dep, l)
				}
				if w, ok := wiredIn[dep]; ok && !slices.Contains(w, pkg) {
					t.Errorf("%s imports %s, which only %s wires: take the roles of internal/port instead", pkg, dep, strings.Join(w, " and "))
				}
			}
			if layer < pureLayers && slices.Contains(io, imp) {
				t.Errorf("%s imports %s: the pure layers make no request and run nothing", pkg, imp)
			}
		}
	}
}

// productPackages lists the folders of cmd/ and internal/ that hold
// non-test Go files, the test kit left out.
func productPackages(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for _, top := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if rel == filepath.Join("internal", "testkit") || d.Name() == "testdata" || d.Name() == "template" {
				return filepath.SkipDir
			}
			if files, _ := filepath.Glob(filepath.Join(path, "*.go")); slices.ContainsFunc(files, func(f string) bool { return !strings.HasSuffix(f, "_test.go") }) {
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) < 20 {
		t.Fatalf("found only %d packages under %s", len(out), root)
	}
	return out
}
