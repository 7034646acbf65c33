package issues

import "strconv"

// Quote shows text read from an issue (a login, a label, a phase) in a
// message: quoted, escaped, at most 60 characters.
func Quote(s string) string {
	r := []rune(s)
	if len(r) > 60 {
		return strconv.Quote(string(r[:60])) + "…"
	}
	return strconv.Quote(s)
}
