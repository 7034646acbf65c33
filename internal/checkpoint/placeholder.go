package checkpoint

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// IssuePlaceholder is the value of checkpoint.issue an issue template
// carries, since the number is not known before the issue is submitted:
// the guard's first run on the issue sets the real number
// (docs/contract.md §2). Only the literal 0 is the placeholder.
const IssuePlaceholder = 0

// HoldsPlaceholder reports whether issue is the template's literal 0.
func (r Result) HoldsPlaceholder() bool {
	_, ok := placeholderAt(r)
	return ok
}

// FillIssue returns the body of r with the checkpoint's placeholder issue
// (the literal 0) set to n, every other byte as it was. ok is false when
// the body holds no placeholder, or n is not an issue number.
func FillIssue(body string, r Result, n int64) (filled string, ok bool) {
	at, ok := placeholderAt(r)
	if !ok || n < 1 || r.Blocks[0].body != body {
		return body, false
	}
	return body[:at] + strconv.FormatInt(n, 10) + body[at+1:], true
}

// placeholderAt is the placeholder 0's byte offset in the body.
func placeholderAt(r Result) (int, bool) {
	cp := r.Checkpoint
	if cp == nil || len(r.Blocks) != 1 || !cp.Issue.Set || cp.Issue.Value != IssuePlaceholder {
		return 0, false
	}
	body := r.Blocks[0].body
	at, ok := offset(body, cp.Issue.Pos)
	if !ok || at >= len(body) || body[at] != '0' {
		return 0, false
	}
	if rest := body[at+1:]; rest != "" && !strings.ContainsRune(" \t\r\n#,}", rune(rest[0])) {
		return 0, false // 00, 0x0, 0o0: a zero, not the placeholder's literal
	}
	return at, true
}

// offset takes a 1-based line and a column in characters.
func offset(body string, p Pos) (int, bool) {
	at := 0
	for line := 1; line < p.Line; line++ {
		i := strings.IndexByte(body[at:], '\n')
		if i < 0 {
			return 0, false
		}
		at += i + 1
	}
	for col := 1; col < p.Col; col++ {
		if at >= len(body) || body[at] == '\n' {
			return 0, false
		}
		_, size := utf8.DecodeRuneInString(body[at:])
		at += size
	}
	return at, true
}
