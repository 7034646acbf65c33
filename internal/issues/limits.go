package issues

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/gns-guard/gns-guard/internal/tokens"
)

// The most the guard reads of one text. Anything longer is not kept and is
// the violation content-too-large, so no agent can make the guard unable to
// run. 1 MiB is far beyond the protocol's needs: an entry load is at most
// 20,000 tokens, a checkpoint 64 KiB, a guard comment 65,536 characters.
const (
	// MaxBodyBytes bounds the issue body, in bytes.
	MaxBodyBytes = 1 << 20
	// MaxCommentBytes bounds one comment's body, in bytes.
	MaxCommentBytes = 1 << 20
)

// EntryTokens is what the comment weighs in the next agent's entry load:
// its tokens, counted; for a comment too large to read, its length in bytes
// and at least MaxCommentBytes (a token holds at least one byte, so that is
// the most it can weigh: the pressure rule errs towards pressure).
func (c Comment) EntryTokens(counter *tokens.Counter) int {
	if c.TooLarge {
		return int(max(c.BodyBytes, MaxCommentBytes))
	}
	return counter.Count(c.Body)
}

// CheckUTF8 says where data stops being UTF-8, the only text the guard
// reads: nil when it is all UTF-8.
func CheckUTF8(data []byte) error {
	if utf8.Valid(data) {
		return nil
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			line := 1 + bytes.Count(data[:i], []byte("\n"))
			return fmt.Errorf("invalid byte 0x%02x on line %d, byte offset %d", data[i], line, i)
		}
		i += n
	}
	return nil
}
