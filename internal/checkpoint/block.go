package checkpoint

import (
	"regexp"
	"strings"
)

// Block is a fenced YAML code block in an issue body. Offsets are bytes into
// the body; the fence lines belong to the block, so rewriting Content touches
// nothing outside [Start, End).
type Block struct {
	Start        int    // first byte of the opening fence line
	End          int    // first byte after the closing fence line (or the body's end)
	ContentStart int    // first byte of the first content line
	ContentEnd   int    // first byte of the closing fence line (or the body's end)
	Line         int    // body line (1-based) of the first content line
	Indent       int    // spaces before the opening fence (0-3)
	Closed       bool   // false when the fence runs to the end of the body
	Newline      string // "\r\n" when the block's lines end that way, else "\n"

	body string
	// strip[i] counts indentation columns removed from content line i.
	strip []int
}

// Raw is the block's content exactly as in the body.
func (b Block) Raw() string { return b.body[b.ContentStart:b.ContentEnd] }

// Content folds CRLF and drops the fence's indentation, as CommonMark reads
// it.
func (b Block) Content() string {
	lines := splitLines(b.Raw())
	var sb strings.Builder
	sb.Grow(b.ContentEnd - b.ContentStart)
	for i, ln := range lines {
		l := strings.TrimSuffix(ln.text, "\r")
		strip := 0
		if i < len(b.strip) {
			strip = b.strip[i]
		}
		sb.WriteString(l[min(strip, len(l)):])
		if lines[i].nl {
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

// Pos maps a 1-based Content position to the body.
func (b Block) Pos(line, col int) Pos {
	if line < 1 {
		line = 1
	}
	extra := 0
	if line-1 < len(b.strip) {
		extra = b.strip[line-1]
	}
	if col < 1 {
		col = 1
	}
	return Pos{Line: b.Line + line - 1, Col: col + extra}
}

// Replace returns body with the block's content replaced by content (YAML
// with LF line ends). The fence lines and every byte outside the block stay
// as they were; the block keeps its line ends and indentation.
func (b Block) Replace(content string) string {
	content = strings.TrimRight(content, "\n")
	indent := strings.Repeat(" ", b.Indent)
	var sb strings.Builder
	sb.Grow(len(b.body) + len(content))
	sb.WriteString(b.body[:b.ContentStart])
	if content != "" {
		for line := range strings.SplitSeq(content, "\n") {
			if line != "" {
				sb.WriteString(indent)
			}
			sb.WriteString(line)
			sb.WriteString(b.Newline)
		}
	}
	if !b.Closed {
		// Close an unclosed fence so the block swallows nothing after it.
		if b.ContentEnd > b.ContentStart && !strings.HasSuffix(b.Raw(), "\n") && content == "" {
			sb.WriteString(b.Newline)
		}
		sb.WriteString(indent)
		sb.WriteString(b.fence())
		sb.WriteString(b.Newline)
	}
	sb.WriteString(b.body[b.ContentEnd:])
	return sb.String()
}

func (b Block) fence() string {
	open := strings.TrimLeft(b.body[b.Start:b.ContentStart], " ")
	n := 0
	for n < len(open) && open[n] == open[0] {
		n++
	}
	return open[:n]
}

type line struct {
	start int // offset in the text
	text  string
	nl    bool // ends with '\n'
}

func splitLines(s string) []line {
	var out []line
	for off := 0; off < len(s); {
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			out = append(out, line{start: off, text: s[off:]})
			break
		}
		out = append(out, line{start: off, text: s[off : off+i], nl: true})
		off += i + 1
	}
	return out
}

var openFence = regexp.MustCompile("^( {0,3})(`{3,}|~{3,})[ \t]*([^ \t`]*)([^`]*)$")

// YAMLBlocks returns the body's top-level fenced code blocks whose info
// string is yaml or yml, in order. Fences follow CommonMark: ``` or ~~~,
// three or more, indented at most three spaces; the closing fence uses the
// same character at least as many times; an unclosed fence runs to the end.
func YAMLBlocks(body string) []Block {
	var blocks []Block
	lines := splitLines(body)
	for i := 0; i < len(lines); i++ {
		text := strings.TrimSuffix(lines[i].text, "\r")
		m := openFence.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		if m[2][0] == '`' && strings.Contains(m[3]+m[4], "`") {
			continue
		}
		fenceChar, fenceLen, indent := m[2][0], len(m[2]), len(m[1])
		// Find the closing fence.
		j := i + 1
		for ; j < len(lines); j++ {
			if isClosingFence(strings.TrimSuffix(lines[j].text, "\r"), fenceChar, fenceLen) {
				break
			}
		}
		info := strings.ToLower(m[3])
		if info == "yaml" || info == "yml" {
			b := Block{
				Start:   lines[i].start,
				Line:    i + 2,
				Indent:  indent,
				Newline: "\n",
				body:    body,
			}
			if strings.HasSuffix(lines[i].text, "\r") {
				b.Newline = "\r\n"
			}
			if i+1 < len(lines) {
				b.ContentStart = lines[i+1].start
			} else {
				b.ContentStart = len(body)
			}
			if j < len(lines) {
				b.Closed = true
				b.ContentEnd = lines[j].start
				b.End = lines[j].start + len(lines[j].text)
				if lines[j].nl {
					b.End++
				}
			} else {
				b.ContentEnd, b.End = len(body), len(body)
			}
			for k := i + 1; k < j && k < len(lines); k++ {
				b.strip = append(b.strip, leadingSpaces(lines[k].text, indent))
			}
			blocks = append(blocks, b)
		}
		i = j // skip the block's content and its closing fence
	}
	return blocks
}

func isClosingFence(s string, ch byte, n int) bool {
	i := 0
	for i < len(s) && i < 4 && s[i] == ' ' {
		i++
	}
	if i > 3 {
		return false
	}
	k := 0
	for i+k < len(s) && s[i+k] == ch {
		k++
	}
	if k < n {
		return false
	}
	return strings.TrimRight(s[i+k:], " \t") == ""
}

func leadingSpaces(s string, most int) int {
	n := 0
	for n < most && n < len(s) && s[n] == ' ' {
		n++
	}
	return n
}
