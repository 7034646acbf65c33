package checkpoint

import (
	"regexp"
	"strings"
	"time"
)

// The read hint is a YAML comment in the checkpoint block's first lines:
// where the guard's next read of the comments may start
// (docs/ledger.md#the-read-hint). It is no key, so schema, rules and
// digests never see it. Anyone may edit it, so the reader trusts it for
// nothing.

// hintLine ignores indentation and line end.
var hintLine = regexp.MustCompile(`^#[ \t]*gns-guard:[ \t]*comments since[ \t]+(\S+)[ \t]*$`)

// HintLine is one YAML comment line.
func HintLine(t time.Time) string {
	return "# gns-guard: comments since " + t.UTC().Truncate(time.Second).Format(time.RFC3339)
}

// Hint returns the time the read hint of body's checkpoint block names:
// the earliest, when an edit left several. ok is false when the body has
// no single fenced checkpoint block, or its first lines hold no hint.
func Hint(body string, maxBytes int) (t time.Time, ok bool) {
	b, found := hintBlock(body, maxBytes)
	if !found {
		return time.Time{}, false
	}
	for _, l := range leadingHints(b.Raw()) {
		at, err := time.Parse(time.RFC3339, l.at)
		if err != nil {
			continue
		}
		if !ok || at.Before(t) {
			t, ok = at, true
		}
	}
	return t.UTC().Truncate(time.Second), ok
}

// WithHint returns body with the checkpoint block's read hint set to t, as
// the block's first line; other hint lines go. A zero t removes them all. A
// hint that would pass maxBytes, or a body without one checkpoint block,
// leaves body as it is.
func WithHint(body string, t time.Time, maxBytes int) string {
	b, found := hintBlock(body, maxBytes)
	if !found {
		return body
	}
	kept := b.Text()
	line := ""
	if !t.IsZero() {
		line = strings.Repeat(" ", b.Indent) + HintLine(t) + b.Newline
		if len(line)+len(kept) > maxOr(maxBytes) {
			line = ""
		}
	}
	return body[:b.ContentStart] + line + kept + body[b.ContentEnd:]
}

// RewriteHint returns body, a rewrite of old, with the read hint t (old's
// when t is zero): once, the block's first line, whatever the rewrite did
// with the hint old had.
func RewriteHint(old, body string, t time.Time, maxBytes int) string {
	if t.IsZero() {
		t, _ = Hint(old, maxBytes)
	}
	return WithHint(body, t, maxBytes)
}

// Text is the block's content as an agent loads it and the guard measures
// it: Raw without the read hint, which is the guard's bookkeeping.
func (b Block) Text() string {
	raw := b.Raw()
	hints := leadingHints(raw)
	for i := len(hints) - 1; i >= 0; i-- {
		raw = raw[:hints[i].start] + raw[hints[i].end:]
	}
	return raw
}

// hintBlock is body's one checkpoint block, when it is fenced: a bare
// checkpoint (a body of YAML alone) carries no hint, since a comment line
// there would show as a heading.
func hintBlock(body string, maxBytes int) (Block, bool) {
	blocks := Find(body, maxBytes)
	if len(blocks) != 1 || blocks[0].Start == blocks[0].ContentStart {
		return Block{}, false
	}
	return blocks[0], true
}

// hintAt is a hint line's byte span, line end included, and time text.
type hintAt struct {
	start, end int
	at         string
}

// leadingHints are the hint lines among the first lines of raw, before its
// first line that is neither blank nor a comment: there no line can be
// part of a YAML value, so removing one changes no data.
func leadingHints(raw string) []hintAt {
	var out []hintAt
	for _, l := range splitLines(raw) {
		text := strings.TrimSpace(strings.TrimSuffix(l.text, "\r"))
		if text != "" && !strings.HasPrefix(text, "#") {
			break
		}
		if m := hintLine.FindStringSubmatch(text); m != nil {
			end := l.start + len(l.text)
			if l.nl {
				end++
			}
			out = append(out, hintAt{start: l.start, end: end, at: m[1]})
		}
	}
	return out
}

func maxOr(maxBytes int) int {
	if maxBytes > 0 {
		return maxBytes
	}
	return DefaultMaxBytes
}
