package markdown

import (
	"strconv"
	"strings"
)

// Plural writes a count with its noun: 1 entry, 2 entries, 3 parts.
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if s, ok := strings.CutSuffix(what, "y"); ok {
		return strconv.Itoa(n) + " " + s + "ies"
	}
	return strconv.Itoa(n) + " " + what + "s"
}
