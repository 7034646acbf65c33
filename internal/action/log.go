package action

import (
	"fmt"
	"io"
	"strings"

	"github.com/gns-guard/gns-guard/internal/fence"
)

// logger writes the run's log. The Gitea runner obeys workflow commands
// (::set-env, ::add-path, ...) in anything a step prints, with no opt-in, so
// text that may come from an issue is only ever printed inside a fence.
type logger struct {
	w io.Writer
}

// infof prints only the guard's own words and numbers.
func (l *logger) infof(format string, args ...any) {
	fmt.Fprintf(l.w, format+"\n", args...)
}

// untrusted prints text that may hold issue content, fenced off so that the
// runner executes none of it. It goes to stdout with the fence, errors
// included: a fence on one stream does not cover the other.
func (l *logger) untrusted(lines ...string) {
	if len(lines) == 0 {
		return
	}
	fc := fence.New()
	fmt.Fprint(l.w, fc.Open())
	for _, line := range lines {
		// A line cannot end the fence early: the token is random and unknown
		// to whoever wrote the issue. Carriage returns are folded so that no
		// line can hide behind another on a terminal.
		fmt.Fprintln(l.w, strings.ReplaceAll(line, "\r", `\r`))
	}
	fmt.Fprint(l.w, fc.Close())
}
