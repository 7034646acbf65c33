package offline

import (
	"fmt"
	"strings"
)

// plural writes a count with its noun: 1 entry, 2 entries.
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if s, ok := strings.CutSuffix(what, "y"); ok {
		return fmt.Sprintf("%d %sies", n, s)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// oneLine keeps a message on one line.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", " ")
}
