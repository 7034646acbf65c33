package settings

import (
	"go/build"
	"slices"
	"strings"
	"testing"
)

// TestImports keeps the table below its users: the action, the CLI and the
// adapter import it, never the other way round, and it does no I/O.
func TestImports(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"internal/action", "internal/cli", "internal/forge", "net/http", "os", "os/exec"}
	for _, imp := range pkg.Imports {
		if slices.ContainsFunc(forbidden, func(f string) bool { return imp == f || strings.HasSuffix(imp, "/"+f) }) {
			t.Errorf("package settings imports %s", imp)
		}
	}
}
