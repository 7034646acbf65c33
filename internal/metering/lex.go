package metering

import (
	"bytes"
	"encoding/json"
)

// lexer reads valid JSON's tokens, skipping blanks, commas and colons:
// valid JSON has them only where they belong.
type lexer struct {
	b []byte
	i int
}

// next is the next token: its kind ('{', '}', '[', ']', '"' a string, '0'
// a number, 't', 'f' or 'n' a literal; 0 at the end) and where it lies.
func (l *lexer) next() (kind byte, start, end int) {
	b, i := l.b, l.i
	for i < len(b) && isSeparator(b[i]) {
		i++
	}
	if i == len(b) {
		l.i = i
		return 0, i, i
	}
	start = i
	switch c := b[i]; c {
	case '{', '}', '[', ']':
		i++
	case '"':
		for i++; i < len(b) && b[i] != '"'; i++ {
			if b[i] == '\\' {
				i++
			}
		}
		i++
	case 't', 'f', 'n':
		for i < len(b) && 'a' <= b[i] && b[i] <= 'z' {
			i++
		}
	default:
		c = '0'
		for i < len(b) && isNumberByte(b[i]) {
			i++
		}
		l.i = i
		return c, start, i
	}
	l.i = min(i, len(b))
	return b[start], start, l.i
}

func isSeparator(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',' || c == ':'
}

func isNumberByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// unquote is a JSON string's value.
func unquote(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s) // valid JSON: it does not fail
	return s
}
