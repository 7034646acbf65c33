package archtest

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit"
)

// A verb parses its flags, calls the core and prints (internal/cli's
// doc.go): the command line's production files stay under these.
const (
	maxCLILines   = 3000
	maxCLIImports = 15
)

// TestTheCommandLineIsThin fails when internal/cli's production files
// reach maxCLILines lines or import maxCLIImports of our packages, and
// prints both figures.
func TestTheCommandLineIsThin(t *testing.T) {
	root, err := testkit.Root()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "internal", "cli", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	lines, ours := 0, map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(data, []byte("\n"))
		f, err := parser.ParseFile(fset, name, data, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if dep, ok := strings.CutPrefix(strings.Trim(imp.Path.Value, `"`), module); ok {
				ours[dep] = true
			}
		}
	}
	counted := len(ours)
	t.Logf("internal/cli: %d production lines (limit %d), %d of our packages imported (limit %d)",
		lines, maxCLILines, counted, maxCLIImports)
	if lines >= maxCLILines {
		t.Errorf("internal/cli has %d production lines, %d or more: move the verbs' work into the core and keep parse, call, print",
			lines, maxCLILines)
	}
	if counted >= maxCLIImports {
		t.Errorf("internal/cli imports %d of our packages, %d or more: reach the core through the packages of the verbs' work",
			counted, maxCLIImports)
	}
}
