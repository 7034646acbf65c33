// Package golden compares what a test produced with a golden file, and
// rewrites the file instead when the test runs with -update: adding a case
// is adding its input, running once with -update and reviewing the diff.
// It is for tests only, and imports nothing of the project's.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Check fails t unless the file at path holds got, byte for byte; with
// -update it writes got there instead. rerun says how to regenerate the
// file, in the failure message.
func Check(t testing.TB, path, got, rerun string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no golden file (run %s): %v", rerun, err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run %s and review the diff):\n--- got\n%s\n--- want\n%s", filepath.Base(path), rerun, got, want)
	}
}
