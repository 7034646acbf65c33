package markdown

import (
	"strconv"
	"strings"
	"unicode"
)

// QuoteRunes is how many characters of untrusted text Quote shows.
const QuoteRunes = 60

// Quote quotes and escapes issue text, at most QuoteRunes characters.
func Quote(s string) string { return QuoteN(s, QuoteRunes) }

// QuoteN is Quote with at most most characters shown, then "…".
func QuoteN(s string, most int) string {
	r := []rune(s)
	if len(r) > most {
		return strconv.Quote(string(r[:most])) + "…"
	}
	return strconv.Quote(s)
}

// OneLine makes untrusted text safe for a heading or a one-line field:
// control and invisible characters (newlines included) become spaces, runs
// of spaces shrink to one, and the result is cut to most characters ("–"
// when nothing is left).
func OneLine(s string, most int) string {
	var b strings.Builder
	space := false
	n := 0
	for _, r := range strings.TrimSpace(s) {
		if unicode.IsControl(r) || unicode.IsSpace(r) || r == '\u2028' || r == '\u2029' || Invisible(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
			n++
		}
		space = false
		if n >= most {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		n++
	}
	if b.Len() == 0 {
		return "–"
	}
	return b.String()
}
