package action

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/sethvargo/go-githubactions"
)

// logger writes the run's log. The Gitea runner obeys workflow commands
// (::set-env, ::add-path, ...) in anything a step prints, with no opt-in, so
// text that may come from an issue is only ever printed inside a Fence.
type logger struct {
	w io.Writer
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
	fence := NewFence()
	fmt.Fprint(l.w, fence.Open())
	for _, line := range lines {
		// A line cannot end the fence early: the token is random and unknown
		// to whoever wrote the issue. Carriage returns are folded so that no
		// line can hide behind another on a terminal.
		fmt.Fprintln(l.w, strings.ReplaceAll(line, "\r", `\r`))
	}
	fmt.Fprint(l.w, fence.Close())
}

// Fence keeps a runner from obeying workflow commands in text that may hold
// issue content: between Open (::stop-commands::<token>) and Close
// (::<token>::) the runner executes nothing. The token is random, so text
// written before the fence was made cannot close it early.
type Fence struct{ token string }

// NewFence returns a fence with a fresh random token.
func NewFence() Fence {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return Fence{token: "gns-guard-" + hex.EncodeToString(b)}
}

// Open is the line that starts the fence.
func (f Fence) Open() string {
	return command(&githubactions.Command{Name: "stop-commands", Message: f.token})
}

// Close is the line that ends the fence.
func (f Fence) Close() string { return command(&githubactions.Command{Name: f.token}) }

// Wrap returns text inside the fence, ending its last line if it is open.
func (f Fence) Wrap(text string) string {
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return f.Open() + text + f.Close()
}

// command renders one workflow command line as the toolkit writes it.
func command(c *githubactions.Command) string {
	var b bytes.Buffer
	githubactions.New(githubactions.WithWriter(&b)).IssueCommand(c)
	return b.String()
}
