package guard

import "strconv"

// quoteShort shows untrusted text in a message: quoted, escaped, at most
// 60 characters.
func quoteShort(s string) string {
	r := []rune(s)
	if len(r) > 60 {
		return strconv.Quote(string(r[:60])) + "…"
	}
	return strconv.Quote(s)
}
