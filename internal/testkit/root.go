package testkit

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
)

// Root returns the repository's root directory: the nearest folder above
// this source file that holds go.mod.
func Root() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("testkit: cannot locate the source tree")
	}
	for dir := filepath.Dir(file); ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testkit: no go.mod above " + file)
		}
		dir = parent
	}
}
