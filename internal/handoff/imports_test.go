package handoff

import (
	"go/build"
	"slices"
	"strings"
	"testing"
)

// TestStaysPure holds the package to its doc: no shell, adapter or network.
func TestStaysPure(t *testing.T) {
	forbidden := []string{"internal/action", "internal/forge", "internal/cli", "net/http", "os/exec", "code.gitea.io/sdk/gitea"}
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if slices.ContainsFunc(forbidden, func(f string) bool { return strings.HasSuffix(imp, f) }) {
			t.Errorf("package handoff imports %s: it must not do I/O", imp)
		}
	}
}
