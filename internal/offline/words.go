package offline

import (
	"strings"
)

// oneLine keeps a message on one line.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", " ")
}
