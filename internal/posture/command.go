package posture

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// command is how a run: step calls the guard: a binary by its path, or
// go run of a package at a version.
type command struct {
	binary string // the program's path as written: gns-guard, /usr/local/bin/gns-guard
	pkg    string // go run's package: github.com/gns-guard/gns-guard/cmd/gns-guard@v1.4.0
}

// guardCommand finds a script's command that runs the guard's action verb:
// `gns-guard action` or `go run <package>/cmd/gns-guard[@version] action`,
// the verb optional. A command is a line, continued by a backslash, or a
// part after ;, && or ||; exec, env and VAR=value before it are skipped.
func guardCommand(script string) (command, bool) {
	script = strings.ReplaceAll(script, "\\\n", " ")
	for _, line := range strings.Split(script, "\n") {
		for _, part := range commandSep.Split(line, -1) {
			if c, ok := readCommand(shellWords(part)); ok {
				return c, true
			}
		}
	}
	return command{}, false
}

// commandSep splits a line into its commands.
var commandSep = regexp.MustCompile(`;|&&|\|\|`)

// assignment is a VAR=value word before a command.
var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// readCommand reads one command's words.
func readCommand(words []string) (command, bool) {
	for len(words) > 0 && (words[0] == "exec" || words[0] == "env" || assignment.MatchString(words[0])) {
		words = words[1:]
	}
	if len(words) == 0 || strings.HasPrefix(words[0], "#") {
		return command{}, false
	}
	if path.Base(words[0]) == "gns-guard" {
		return command{binary: words[0]}, isActionVerb(words[1:])
	}
	if words[0] != "go" || len(words) < 3 || words[1] != "run" {
		return command{}, false
	}
	rest := words[2:]
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
		rest = rest[1:]
	}
	if len(rest) == 0 {
		return command{}, false
	}
	pkg, _, _ := strings.Cut(rest[0], "@")
	return command{pkg: rest[0]}, path.Base(pkg) == "gns-guard" && isActionVerb(rest[1:])
}

// isActionVerb: the verb action, or none, runs the action.
func isActionVerb(args []string) bool {
	return len(args) == 0 || args[0] == "action" || strings.HasPrefix(args[0], "#")
}

// shellWords splits a command into words as a POSIX shell quotes them
// (no expansion): 'a b' and "a b" are one word each.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// moduleVersion is a version go run fixes a module to: a release, a
// prerelease or a pseudo-version (a commit), which the checksum database
// holds to one content.
var moduleVersion = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+incompatible)?$`)

// pinned says whether a Code writer can change the binary the step runs. A
// binary on the runner's host (PATH, an absolute path, $HOME) is the host
// administrator's; one in or built from the work directory is the pusher's.
// go run at a version is fixed by the checksum database.
func (c command) pinned() (bool, string) {
	if c.pkg != "" {
		pkg, version, _ := strings.Cut(c.pkg, "@")
		switch {
		case moduleVersion.MatchString(version):
			return true, fmt.Sprintf("the guard's step builds %s, a version the Go checksum database fixes", c.pkg)
		case version == "":
			return false, fmt.Sprintf("the guard's step builds %s from the job's work directory: whoever pushes the code changes the "+
				"guard; run a release (go run …/cmd/gns-guard@vX.Y.Z) or a binary installed on the runner's host", pkg)
		}
		return false, fmt.Sprintf("the guard's step builds %s, which follows whatever the module's newest version is: name a version (…@vX.Y.Z)", c.pkg)
	}
	b := c.binary
	if !strings.Contains(b, "/") || strings.HasPrefix(b, "/") || strings.HasPrefix(b, "~/") || strings.HasPrefix(b, "$HOME/") ||
		strings.HasPrefix(b, "${HOME}/") {
		return true, fmt.Sprintf("the guard's step runs %s installed on the runner's host: its version is the host administrator's to "+
			"choose (gns-guard --version)", b)
	}
	return false, fmt.Sprintf("the guard's step runs %s from the job's work directory: whoever pushes the code can change it; "+
		"install the binary on the runner's host", b)
}
