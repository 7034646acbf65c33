package briefing

import (
	"path/filepath"
	"strings"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// Flags are `context`'s flags as they name the issue and what it loads.
type Flags struct {
	Repo, Body, Comments string
	Issue                int64
	LabelsSet            bool
	Files                []string
	Cap                  int
	Size, Format         string
}

// Check refuses flags that name no issue, or one two ways, or ask what the
// protocol refuses. The usage errors name the flags.
func (f Flags) Check() error {
	for _, check := range []func() error{f.checkSource, f.checkLimits, f.checkFiles, f.checkRepo} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// checkSource checks that the flags name one issue: on the server, or
// offline.
func (f Flags) checkSource() error {
	switch {
	case f.Repo != "" && f.Body != "":
		return usageError("context: give either --repo OWNER/NAME --issue N (read the server) or --body FILE (offline), not both")
	case f.Repo == "" && f.Body == "":
		return usageError("context: say which issue: --repo OWNER/NAME --issue N, or --body FILE [--comments FILE] offline")
	case f.Comments != "" && f.Body == "":
		return usageError("context: --comments goes with --body; with --repo the comments are read from the server")
	case f.LabelsSet && f.Body == "":
		return usageError("context: --labels goes with --body; with --repo the live labels are read")
	}
	return nil
}

// checkLimits checks the numbers and the format.
func (f Flags) checkLimits() error {
	switch {
	case len(f.Files) > MaxFiles:
		return usageError("context: %d files named with --file; an agent loads at most %d (the protocol's limit): name the %d the task needs most",
			len(f.Files), MaxFiles, MaxFiles)
	case f.Cap < 0:
		return usageError("context: --cap must be a positive number of tokens, not %d", f.Cap)
	case f.Format != "text" && f.Format != "json":
		return usageError("context: --format must be text or json, not %q", f.Format)
	case f.Issue < 0:
		return usageError("context: --issue must be a positive issue number, not %d", f.Issue)
	}
	return nil
}

// checkFiles refuses a file named twice and an unknown --size.
func (f Flags) checkFiles() error {
	seen := map[string]bool{}
	for _, name := range f.Files {
		if seen[filepath.Clean(name)] {
			return usageError("context: --file %s is named twice", name)
		}
		seen[filepath.Clean(name)] = true
	}
	if f.Size != "" {
		if _, ok := issues.TaskSizeNamed(f.Size); !ok {
			return usageError("context: --size must be tiny, small, medium or large, not %q", f.Size)
		}
	}
	return nil
}

// checkRepo checks --repo and --issue, when the issue is read from the
// server.
func (f Flags) checkRepo() error {
	if f.Repo == "" {
		return nil
	}
	owner, name, ok := strings.Cut(f.Repo, "/")
	switch {
	case !ok || owner == "" || name == "" || strings.Contains(name, "/"):
		return usageError("context: --repo must be OWNER/NAME, not %q", f.Repo)
	case f.Issue < 1:
		return usageError("context: --issue N (a positive issue number) is required with --repo")
	}
	return nil
}
