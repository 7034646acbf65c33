package cli

import (
	"bytes"
	"fmt"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// maxResultBytes bounds report's --result-file: the comment it becomes,
// with its header, footer and fences (far less than 64 KiB), must stay
// within what the guard reads of a comment (issues.MaxCommentBytes).
const maxResultBytes = issues.MaxCommentBytes - 64<<10

// readText reads a text input, FILE or standard input for "-", as
// readInput does, and refuses what cannot be text the guard reads: more
// than limit bytes (a usage error), a NUL byte, or bytes that are not
// UTF-8 (notText). Each refusal names the verb, what the input is for,
// the file and where the problem is.
func readText(env Env, verb, what, name string, limit int) (string, error) {
	text, err := readInput(env, name)
	if err != nil {
		return "", err
	}
	data := []byte(text)
	if len(data) > limit {
		return "", inputError{usageError("%s: the %s %s is %s bytes, over the %s bytes it may hold: shorten it", verb, what, name, tokens.Format(len(data)), tokens.Format(limit))}
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		line := 1 + bytes.Count(data[:i], []byte("\n"))
		return "", notText("%s: the %s %s looks binary (a NUL byte on line %d, byte offset %d): only text can be read", verb, what, name, line, i)
	}
	if err := issues.CheckUTF8(data); err != nil {
		return "", notText("%s: the %s %s is not UTF-8 text (%v): convert it to UTF-8", verb, what, name, err)
	}
	return text, nil
}

// notText is a finding about an input: it is not text the guard reads (a
// NUL byte, bytes that are not UTF-8). Exit 1, as for any finding about
// the input; not a usage error (docs/contract.md §9).
func notText(format string, args ...any) error {
	return &exitcode.ViolationError{Err: fmt.Errorf(format, args...)}
}
