package action

import (
	"strings"

	"github.com/sethvargo/go-githubactions"
)

// outputDelimiter is the fixed heredoc delimiter of the toolkit's file
// commands. A value holding it could end the value early and add outputs
// of its own, so values are made single-line and stripped of it.
const outputDelimiter = "_GitHubActionsFileCommandDelimeter_"

// toolkit wraps the Actions toolkit's file commands, which panic when
// their file cannot be written: outputs and the step summary are written
// only when the runner named their files, and a failed write is a warning,
// never a crash.
type toolkit struct {
	gh     *githubactions.Action
	getenv func(string) string
	warn   func(format string, args ...any)
}

// output is injection-proof: values are single-line JSON, never the
// delimiter.
func (t *toolkit) output(name, value string) {
	value = strings.NewReplacer("\r", " ", "\n", " ", outputDelimiter, "").Replace(value)
	t.fileCommand("GITHUB_OUTPUT", func() { t.gh.SetOutput(name, value) })
}

// summary appends markdown to the step summary.
func (t *toolkit) summary(markdown string) {
	t.fileCommand("GITHUB_STEP_SUMMARY", func() { t.gh.AddStepSummary(markdown) })
}

// fileCommand runs write when env names a file.
func (t *toolkit) fileCommand(env string, write func()) {
	if t.getenv(env) == "" {
		return
	}
	defer func() {
		if p := recover(); p != nil && t.warn != nil {
			t.warn("gns-guard: warning: cannot write %s: %v", env, p)
		}
	}()
	write()
}
