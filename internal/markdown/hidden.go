package markdown

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// What Strip takes out of a text: what Gitea 1.26's Markdown renderer
// does not show a person (held against the real server's /markdown API
// by internal/action's TestStripHoldsGiteasRendering).
const (
	// HiddenComment is an HTML comment.
	HiddenComment = "HTML comment"
	// HiddenElement: Gitea drops noscript, iframe, title, object with their
	// content.
	HiddenElement = "dropped HTML element"
	// HiddenDeclaration is a CDATA section or an HTML declaration.
	HiddenDeclaration = "CDATA section or declaration"
	// HiddenAttribute is an alt, title or value attribute.
	HiddenAttribute = "HTML attribute (alt, title or value)"
	// HiddenReference is a link reference definition: [label]: url "title".
	HiddenReference = "link reference definition"
	// HiddenAlt is an image's alt text: ![alt](url).
	HiddenAlt = "image alt text"
	// HiddenInfo is a code fence's info string past its language.
	HiddenInfo = "code fence info past the language"
	// HiddenCharacter is invisible (see Invisible).
	HiddenCharacter = "invisible character"
	// HiddenMarker is the guard's marker or a GNS_EVENT footer: never
	// loaded, not suspicious.
	HiddenMarker = "guard marker or GNS_EVENT footer"
)

// Removal is one piece of text Strip took out.
type Removal struct {
	// Kind is one of the Hidden* kinds.
	Kind string
	// Line is 1-based, where it started.
	Line int
	// Runes is how many characters it held.
	Runes int
}

// Strip removes what Gitea does not show a person and a model would still
// read: HTML comments, dropped elements, hidden attributes, link
// definitions, alt text, and invisible characters. It parses as Gitea does
// (goldmark, docs/choices.md#hidden-text), so no HTML passes as text, and
// repeats until nothing goes. It returns the text and the removals.
func Strip(s string) (string, []Removal) {
	var all []Removal
	for range maxRounds {
		out, rs := strip(s)
		if len(rs) == 0 {
			break
		}
		s, all = out, append(all, rs...)
	}
	return s, all
}

// maxRounds: a removal rarely uncovers more past the second round.
const maxRounds = 8

// strip is one round of Strip.
func strip(s string) (string, []Removal) {
	src := []byte(s)
	doc := parser.Parser().Parse(text.NewReader(src))
	var cuts []cut
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			cuts = append(cuts, hiddenIn(n, src)...)
		}
		return ast.WalkContinue, nil
	})
	cuts = append(cuts, invisibles(s)...)
	return apply(s, cuts)
}

// StripCharacters takes the invisible characters out of s (text that is
// shown as it is, such as YAML in a code block), and says where.
func StripCharacters(s string) (string, []Removal) { return apply(s, invisibles(s)) }

// parser parses Markdown as Gitea's renderer does (CommonMark and GFM).
var parser = goldmark.New(goldmark.WithExtensions(extension.GFM))

// cut is a byte range [from, to) to take out.
type cut struct {
	from, to int
	kind     string
}

// hiddenIn is what n holds that Gitea hides.
func hiddenIn(n ast.Node, src []byte) []cut {
	switch n := n.(type) {
	case *ast.HTMLBlock:
		lines := n.Lines()
		if lines.Len() == 0 {
			return nil
		}
		from, to := lines.At(0).Start, lines.At(lines.Len()-1).Stop
		if n.HasClosure() {
			to = n.ClosureLine.Stop
		}
		return hiddenHTML(src, from, to)
	case *ast.RawHTML:
		if n.Segments.Len() == 0 {
			return nil
		}
		return hiddenHTML(src, n.Segments.At(0).Start, n.Segments.At(n.Segments.Len()-1).Stop)
	case *ast.LinkReferenceDefinition:
		return linesCut(n.Lines(), HiddenReference)
	case *ast.Image:
		return altCuts(n)
	case *ast.FencedCodeBlock:
		return infoCut(n, src)
	}
	return nil
}

// linesCut is the cut of a node's lines.
func linesCut(lines *text.Segments, kind string) []cut {
	if lines.Len() == 0 {
		return nil
	}
	return []cut{{lines.At(0).Start, lines.At(lines.Len() - 1).Stop, kind}}
}

// altCuts are the text segments of an image's alt text.
func altCuts(img *ast.Image) []cut {
	var out []cut
	_ = ast.Walk(img, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := n.(*ast.Text); ok && entering && n != img {
			out = append(out, cut{t.Segment.Start, t.Segment.Stop, HiddenAlt})
		}
		return ast.WalkContinue, nil
	})
	return out
}

// infoCut is a fence's info string past its first word.
func infoCut(n *ast.FencedCodeBlock, src []byte) []cut {
	if n.Info == nil {
		return nil
	}
	seg := n.Info.Segment
	info := string(src[seg.Start:seg.Stop])
	i := strings.IndexFunc(info, unicode.IsSpace)
	if i < 0 || strings.TrimSpace(info[i:]) == "" {
		return nil
	}
	return []cut{{seg.Start + i, seg.Stop, HiddenInfo}}
}

// The raw HTML Gitea's sanitizer hides.
var (
	htmlComment     = regexp.MustCompile(`(?s)<!--.*?-->|<!--->|<!-->`)
	htmlDeclaration = regexp.MustCompile(`(?s)<!\[CDATA\[.*?\]\]>|<![A-Za-z][^>]*>`)
	droppedOpen     = regexp.MustCompile(`(?i)<(noscript|iframe|title|object)(?:\s[^>]*)?>`)
	htmlTag         = regexp.MustCompile(`<[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>`)
	hiddenAttr      = regexp.MustCompile(`(?i)\s(?:alt|title|value)(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>` + "`" + `]+))?`)
)

// hiddenHTML is what raw HTML at src[from:to] holds that Gitea does not
// show: comments, declarations, dropped elements (to their closing tag,
// which may lie past to), and hidden attributes.
func hiddenHTML(src []byte, from, to int) []cut {
	raw := string(src[from:to])
	var out []cut
	for _, m := range htmlComment.FindAllStringIndex(raw, -1) {
		kind := HiddenComment
		if isMarker(raw[m[0]:m[1]]) {
			kind = HiddenMarker
		}
		out = append(out, cut{from + m[0], from + m[1], kind})
	}
	for _, m := range htmlDeclaration.FindAllStringIndex(raw, -1) {
		out = append(out, cut{from + m[0], from + m[1], HiddenDeclaration})
	}
	for _, m := range droppedOpen.FindAllStringSubmatchIndex(raw, -1) {
		out = append(out, cut{from + m[0], droppedEnd(src, from+m[1], raw[m[2]:m[3]]), HiddenElement})
	}
	for _, m := range htmlTag.FindAllStringIndex(raw, -1) {
		tag := raw[m[0]:m[1]]
		for _, a := range hiddenAttr.FindAllStringIndex(tag, -1) {
			out = append(out, cut{from + m[0] + a[0], from + m[0] + a[1], HiddenAttribute})
		}
	}
	return out
}

// droppedEnd is where a dropped element opened before at ends: after its
// closing tag, or at the end of the text when it is never closed.
func droppedEnd(src []byte, at int, name string) int {
	closing := regexp.MustCompile(`(?i)</` + regexp.QuoteMeta(name) + `\s*>`)
	if m := closing.FindIndex(src[at:]); m != nil {
		return at + m[1]
	}
	return len(src)
}

// isMarker: the guard's marker or a GNS_EVENT footer.
func isMarker(c string) bool {
	body := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(c, "<!--"), "-->"))
	return strings.HasPrefix(body, "gns-guard:") || strings.HasPrefix(body, "GNS_EVENT")
}

// invisibles are the invisible characters of s (Invisible), but for a
// variation selector 15 or 16 or a zero-width joiner right after a
// symbol: an emoji's own presentation, not hidden text.
func invisibles(s string) []cut {
	var out []cut
	var prev rune
	for i, r := range s {
		if Invisible(r) && !(presentation(r) && unicode.Is(unicode.So, prev)) {
			out = append(out, cut{i, i + utf8.RuneLen(r), HiddenCharacter})
		}
		prev = r
	}
	return out
}

func presentation(r rune) bool { return r == '\uFE0E' || r == '\uFE0F' || r == '\u200D' }

// Invisible reports whether r is a character a reader does not see and a
// model reads: a format character (zero-width space and joiners,
// bidirectional controls, the byte order mark, soft hyphen, tag
// characters), a variation selector, a Hangul filler, the combining
// grapheme joiner or a Mongolian variation selector.
func Invisible(r rune) bool {
	switch {
	case unicode.Is(unicode.Cf, r):
		return true
	case r >= '\uFE00' && r <= '\uFE0F', r >= 0xE0100 && r <= 0xE01EF:
		return true
	case r == '\u115F', r == '\u1160', r == '\u3164', r == '\uFFA0', r == '\u034F', r >= '\u180B' && r <= '\u180D':
		return true
	}
	return false
}

// apply merges overlaps, keeping the first kind, and says what went.
func apply(s string, cuts []cut) (string, []Removal) {
	if len(cuts) == 0 {
		return s, nil
	}
	slices.SortStableFunc(cuts, func(a, b cut) int { return a.from - b.from })
	var b strings.Builder
	var out []Removal
	at := 0
	for _, c := range cuts {
		if c.to <= at {
			continue
		}
		c.from = max(c.from, at)
		b.WriteString(s[at:c.from])
		out = append(out, Removal{Kind: c.kind, Line: 1 + strings.Count(s[:c.from], "\n"), Runes: utf8.RuneCountInString(s[c.from:c.to])})
		at = c.to
	}
	b.WriteString(s[at:])
	return b.String(), out
}

// Suspicious are removals other than the guard's markers and footers.
func Suspicious(rs []Removal) []Removal {
	return slices.DeleteFunc(slices.Clone(rs), func(r Removal) bool { return r.Kind == HiddenMarker })
}

// Describe says what removals took out, one phrase a kind in order of
// first appearance: "1 HTML comment (line 3, 58 characters); 2 invisible
// characters (lines 1, 4)". "" for none.
func Describe(rs []Removal) string {
	type group struct {
		kind  string
		lines []int
		runes int
	}
	var gs []*group
	for _, r := range rs {
		i := slices.IndexFunc(gs, func(g *group) bool { return g.kind == r.Kind })
		if i < 0 {
			gs = append(gs, &group{kind: r.Kind})
			i = len(gs) - 1
		}
		g := gs[i]
		g.runes += r.Runes
		if !slices.Contains(g.lines, r.Line) {
			g.lines = append(g.lines, r.Line)
		}
	}
	parts := make([]string, len(gs))
	for i, g := range gs {
		n := 0
		for _, r := range rs {
			if r.Kind == g.kind {
				n++
			}
		}
		where := lineList(g.lines)
		if g.kind != HiddenCharacter {
			where += fmt.Sprintf(", %d characters", g.runes)
		}
		parts[i] = fmt.Sprintf("%d %s (%s)", n, plural(g.kind, n), where)
	}
	return strings.Join(parts, "; ")
}

// plural puts kind in the plural for n != 1.
func plural(kind string, n int) string {
	if n == 1 {
		return kind
	}
	head, rest, _ := strings.Cut(kind, " (")
	if rest != "" {
		rest = " (" + rest
	}
	switch {
	case strings.HasSuffix(head, "text"), strings.HasSuffix(head, "past the language"):
		return head + rest
	case strings.HasSuffix(head, "s"):
		return head + "es" + rest
	}
	return head + "s" + rest
}

// lineList reads "line 3", "lines 1, 4"; five at most, then "…".
func lineList(lines []int) string {
	if len(lines) == 1 {
		return fmt.Sprintf("line %d", lines[0])
	}
	parts := make([]string, 0, 6)
	for i, l := range lines {
		if i == 5 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprint(l))
	}
	return "lines " + strings.Join(parts, ", ")
}
