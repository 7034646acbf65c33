package action

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/sethvargo/go-githubactions"
)

// logger writes the run's log. The Gitea runner obeys workflow commands
// (::set-env, ::add-path, ...) in anything a step prints, with no opt-in, so
// text that may come from an issue is only ever printed between
// ::stop-commands::<random token> and ::<token>::.
type logger struct {
	gh *githubactions.Action
	w  io.Writer
}

// infof prints a line made only of the guard's own words and numbers.
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
	token := stopToken()
	l.gh.IssueCommand(&githubactions.Command{Name: "stop-commands", Message: token})
	for _, line := range lines {
		// A line cannot end the fence early: the token is random and unknown
		// to whoever wrote the issue. Carriage returns are folded so that no
		// line can hide behind another on a terminal.
		fmt.Fprintln(l.w, strings.ReplaceAll(line, "\r", `\r`))
	}
	l.gh.IssueCommand(&githubactions.Command{Name: token})
}

func stopToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return "gns-guard-" + hex.EncodeToString(b)
}
