package guard

import (
	"go/build"
	"slices"
	"strings"
	"testing"
)

// TestCoreStaysPure holds the decision core and the pure packages below it
// to what their package docs promise: none of them reaches the shell, the
// adapter or the network.
func TestCoreStaysPure(t *testing.T) {
	forbidden := []string{"internal/action", "internal/forge", "internal/cli", "net/http", "os/exec", "code.gitea.io/sdk/gitea"}
	for _, dir := range []string{".", "../issues", "../ledger", "../status", "../checkpoint", "../prune", "../agentcomment", "../finding", "../markdown", "../tokens", "../exitcode"} {
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range pkg.Imports {
			if slices.ContainsFunc(forbidden, func(f string) bool { return strings.HasSuffix(imp, f) }) {
				t.Errorf("package %s imports %s: the pure core must not do I/O", pkg.Name, imp)
			}
		}
	}
}
