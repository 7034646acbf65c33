// Package fence keeps a runner from obeying workflow commands in text that
// may hold issue content: the guard's log and every verb's output inside
// Gitea Actions. Between Open (::stop-commands::<token>) and Close
// (::<token>::) the runner executes nothing; the token is random, so text
// written before the fence was made cannot close it early.
package fence

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/sethvargo/go-githubactions"
)

// Fence is one fence, with its token.
type Fence struct{ token string }

// New returns a fence with a fresh random token.
func New() Fence {
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

// Wrap ends an open last line.
func (f Fence) Wrap(text string) string {
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return f.Open() + text + f.Close()
}

// command renders a workflow command as the toolkit does.
func command(c *githubactions.Command) string {
	var b bytes.Buffer
	githubactions.New(githubactions.WithWriter(&b)).IssueCommand(c)
	return b.String()
}
