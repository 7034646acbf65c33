package issues

import (
	"testing"

	"github.com/gns-guard/gns-guard/internal/tokens"
)

// EntryTokens counts a comment, or weighs one too large to read as its
// length, and never less than the limit.
func TestEntryTokens(t *testing.T) {
	c, err := tokens.New(tokens.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	if n := (Comment{Body: "hello world"}).EntryTokens(c); n != 2 {
		t.Errorf("hello world: %d tokens", n)
	}
	if n := (Comment{TooLarge: true, BodyBytes: 3 << 20}).EntryTokens(c); n != 3<<20 {
		t.Errorf("3 MiB: %d", n)
	}
	if n := (Comment{TooLarge: true, Unread: 4}).EntryTokens(c); n != MaxCommentBytes {
		t.Errorf("unread: %d", n)
	}
}
