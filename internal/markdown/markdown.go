package markdown

import "strings"

// Cell renders untrusted text for a table cell: one line, at most most
// characters (0: no limit), with no pipes, HTML, code spans, fences,
// emphasis or links, and no @mentions that would notify people.
func Cell(s string, most int) string {
	r := []rune(strings.TrimSpace(s))
	if most > 0 && len(r) > most {
		r = append(r[:most-1], '…')
	}
	var b strings.Builder
	for _, c := range r {
		switch c {
		case '\n', '\r', '\t':
			b.WriteByte(' ')
		case '|':
			b.WriteString(`\|`)
		case '\\':
			b.WriteString(`\\`)
		case '`':
			b.WriteString("&#96;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '@':
			b.WriteString("&#64;")
		case '[', ']', '*', '_', '~', '#':
			b.WriteByte('\\')
			b.WriteRune(c)
		default:
			b.WriteRune(c)
		}
	}
	if b.Len() == 0 {
		return "–"
	}
	return b.String()
}

// URL keeps a link target from breaking the Markdown.
func URL(u string) string {
	return strings.NewReplacer("(", "%28", ")", "%29", " ", "%20", "|", "%7C", "<", "%3C", ">", "%3E", "\n", "", "\r", "").Replace(u)
}
