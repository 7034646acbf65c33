package tokens

import (
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizer: it splits text into the pieces BPE encodes, exactly as
// tiktoken does with these patterns (Rust regex semantics):
//
// cl100k_base:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// o200k_base:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// tiktoken-go/tokenizer v0.10.0 gets two wrong (tokens_test.go): it splits
// "\n  \n" (an indented blank line) at the first newline, and drops U+007F.
// This scanner is hand-written: linear time, and no backtracking limit to
// fail on.

// Character classes used by the patterns.
const (
	clsLetter  uint8 = 1 << iota // \p{L}
	clsNumber                    // \p{N}
	clsSpace                     // \s: Unicode White_Space
	clsNewline                   // [\r\n]
	clsUpper                     // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	clsLower                     // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := rune(0); r < utf8.RuneSelf; r++ {
		t[r] = classifySlow(r)
	}
	return t
}()

var (
	upperTables = []*unicode.RangeTable{unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M}
	lowerTables = []*unicode.RangeTable{unicode.Ll, unicode.Lm, unicode.Lo, unicode.M}
)

func classifySlow(r rune) uint8 {
	var c uint8
	if unicode.IsLetter(r) {
		c |= clsLetter
	}
	if unicode.IsNumber(r) {
		c |= clsNumber
	}
	if unicode.IsSpace(r) { // Latin-1 spaces + White_Space, as Rust's \s
		c |= clsSpace
	}
	if r == '\r' || r == '\n' {
		c |= clsNewline
	}
	if unicode.IsOneOf(upperTables, r) {
		c |= clsUpper
	}
	if unicode.IsOneOf(lowerTables, r) {
		c |= clsLower
	}
	return c
}

// decode needs i < len(s) and valid UTF-8.
func decode(s string, i int) (cls uint8, size int) {
	if b := s[i]; b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return classifySlow(r), n
}

// classAt returns 0 at the end of s.
func classAt(s string, i int) uint8 {
	if i >= len(s) {
		return 0
	}
	c, _ := decode(s, i)
	return c
}

// isPunct reports [^\s\p{L}\p{N}] (this includes U+007F).
func isPunct(c uint8) bool { return c&(clsSpace|clsLetter|clsNumber) == 0 }

// isPrefix reports [^\r\n\p{L}\p{N}] (this includes U+007F).
func isPrefix(c uint8) bool { return c&(clsNewline|clsLetter|clsNumber) == 0 }

// contraction returns the byte length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at
// s[i:], or 0. Case-insensitive matching uses Unicode simple case folding,
// so U+017F (long s) matches 's' as it does in tiktoken.
func contraction(s string, i int) int {
	if i >= len(s) || s[i] != '\'' || i+1 >= len(s) {
		return 0
	}
	r1, n1 := utf8.DecodeRuneInString(s[i+1:])
	switch {
	case foldEq(r1, 's'), foldEq(r1, 't'), foldEq(r1, 'm'), foldEq(r1, 'd'):
		return 1 + n1
	case foldEq(r1, 'r'), foldEq(r1, 'v'), foldEq(r1, 'l'):
		j := i + 1 + n1
		if j >= len(s) {
			return 0
		}
		r2, n2 := utf8.DecodeRuneInString(s[j:])
		want := 'e'
		if foldEq(r1, 'l') {
			want = 'l'
		}
		if foldEq(r2, want) {
			return 1 + n1 + n2
		}
	}
	return 0
}

// foldEq compares r with lower-case ASCII lc by simple case folding.
func foldEq(r, lc rune) bool {
	if r == lc || r == lc-'a'+'A' {
		return true
	}
	if r < utf8.RuneSelf {
		return false
	}
	for f := unicode.SimpleFold(lc); f != lc; f = unicode.SimpleFold(f) {
		if f == r {
			return true
		}
	}
	return false
}

// splitFunc returns the end of the piece that starts at s[i] (i < len(s)).
// It always returns a value > i that lies on a rune boundary.
type splitFunc func(s string, i int) int

// nextCl100k implements the cl100k_base pattern.
func nextCl100k(s string, i int) int {
	c0, n0 := decode(s, i)

	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if n := contraction(s, i); n > 0 {
		return i + n
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if c0&clsLetter != 0 {
		return scanWhile(s, i+n0, clsLetter)
	}
	if isPrefix(c0) && classAt(s, i+n0)&clsLetter != 0 {
		return scanWhile(s, i+n0, clsLetter)
	}
	// \p{N}{1,3}
	if c0&clsNumber != 0 {
		return scanNumber(s, i, n0)
	}
	// ?[^\s\p{L}\p{N}]+[\r\n]*
	if j, ok := scanPunct(s, i, c0, false); ok {
		return j
	}
	return scanSpace(s, i)
}

// nextO200k implements the o200k_base pattern.
func nextO200k(s string, i int) int {
	c0, n0 := decode(s, i)

	// Word branches: with the optional [^\r\n\p{L}\p{N}] prefix, then
	// without.
	prefixed := isPrefix(c0) && i+n0 < len(s)
	if prefixed {
		if j, ok := o200kLowerWord(s, i+n0); ok {
			return j
		}
	}
	if j, ok := o200kLowerWord(s, i); ok {
		return j
	}
	if prefixed {
		if j, ok := o200kUpperWord(s, i+n0); ok {
			return j
		}
	}
	if j, ok := o200kUpperWord(s, i); ok {
		return j
	}
	// \p{N}{1,3}
	if c0&clsNumber != 0 {
		return scanNumber(s, i, n0)
	}
	// ?[^\s\p{L}\p{N}]+[\r\n/]*
	if j, ok := scanPunct(s, i, c0, true); ok {
		return j
	}
	return scanSpace(s, i)
}

// o200kLowerWord matches [U]*[W]+(?i:'s|...)? at s[i:], where U is
// [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and W is [\p{Ll}\p{Lm}\p{Lo}\p{M}].
// The classes overlap, so when the greedy U* run is not followed by a W
// character the match backtracks to the last W character inside the run.
func o200kLowerWord(s string, i int) (int, bool) {
	j, lastW := i, -1
	for j < len(s) {
		c, n := decode(s, j)
		if c&clsUpper == 0 {
			break
		}
		if c&clsLower != 0 {
			lastW = j + n
		}
		j += n
	}
	if classAt(s, j)&clsLower != 0 {
		j = scanWhile(s, j, clsLower)
		return j + contraction(s, j), true
	}
	if lastW < 0 {
		return 0, false
	}
	return lastW + contraction(s, lastW), true
}

// o200kUpperWord matches [U]+[W]*(?i:'s|...)? at s[i:].
func o200kUpperWord(s string, i int) (int, bool) {
	j := scanWhile(s, i, clsUpper)
	if j == i {
		return 0, false
	}
	j = scanWhile(s, j, clsLower)
	return j + contraction(s, j), true
}

// scanWhile ends the run of class cls from s[i].
func scanWhile(s string, i int, cls uint8) int {
	for i < len(s) {
		c, n := decode(s, i)
		if c&cls == 0 {
			break
		}
		i += n
	}
	return i
}

// scanNumber matches \p{N}{1,3}; s[i:i+n0] is known to be a number.
func scanNumber(s string, i, n0 int) int {
	j := i + n0
	for k := 1; k < 3 && j < len(s); k++ {
		c, n := decode(s, j)
		if c&clsNumber == 0 {
			break
		}
		j += n
	}
	return j
}

// scanPunct matches " ?[^\s\p{L}\p{N}]+[\r\n]*" (with slash, "[\r\n/]*").
func scanPunct(s string, i int, c0 uint8, slash bool) (int, bool) {
	j := i
	if s[i] == ' ' && isPunct(classAt(s, i+1)) {
		j = i + 1
	} else if !isPunct(c0) {
		return 0, false
	}
	for j < len(s) {
		c, n := decode(s, j)
		if !isPunct(c) {
			break
		}
		j += n
	}
	for j < len(s) && (s[j] == '\r' || s[j] == '\n' || (slash && s[j] == '/')) {
		j++
	}
	return j, true
}

// scanSpace matches \s*[\r\n]+|\s+(?!\S)|\s+ at a whitespace character.
func scanSpace(s string, i int) int {
	j, lastNL, lastStart := i, -1, i
	for j < len(s) {
		c, n := decode(s, j)
		if c&clsSpace == 0 {
			break
		}
		if c&clsNewline != 0 {
			lastNL = j
		}
		lastStart = j
		j += n
	}
	switch {
	case j == i:
		// Not whitespace: unreachable, every character is a letter, a
		// number, whitespace or [^\s\p{L}\p{N}]. Consume one rune so
		// that the caller always makes progress.
		_, n := decode(s, i)
		return i + n
	case lastNL >= 0:
		// \s*[\r\n]+: \s* backtracks to the last newline of the run.
		return lastNL + 1
	case j == len(s):
		// \s+(?!\S) at the end takes the whole run.
		return j
	case lastStart > i:
		// \s+(?!\S): the last space prefixes the next piece.
		return lastStart
	default:
		// \s+: a single whitespace character before a non-space.
		return j
	}
}
