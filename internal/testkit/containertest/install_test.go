package containertest_test

import (
	"bufio"
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit"
)

// TestGoInstallable checks what `go install
// github.com/gns-guard/gns-guard/cmd/gns-guard@VERSION` needs of the module:
// that path, no replace or exclude directive (the go command refuses to
// install a module whose go.mod has one), and a main package there.
func TestGoInstallable(t *testing.T) {
	root, err := testkit.Root()
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(mod))
	var path string
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "module":
			if len(f) > 1 {
				path = strings.Trim(f[1], `"`)
			}
		case "replace", "exclude":
			t.Errorf("go.mod has a %s directive: go install github.com/gns-guard/gns-guard/cmd/gns-guard@VERSION would refuse the module", f[0])
		}
	}
	if path != "github.com/gns-guard/gns-guard" {
		t.Errorf("go.mod names the module %q, want github.com/gns-guard/gns-guard", path)
	}
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, "cmd", "gns-guard", "main.go"), nil, parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name.Name != "main" {
		t.Errorf("cmd/gns-guard is package %s, want main", f.Name.Name)
	}
}
