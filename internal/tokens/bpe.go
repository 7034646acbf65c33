package tokens

import (
	"fmt"
	"hash/maphash"
	"reflect"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/dlclark/regexp2/v2"
	"github.com/tiktoken-go/tokenizer/codec"
)

// pieceBPE runs the library's byte-pair encoding on one pre-tokenized
// piece. tiktoken-go/tokenizer has no piece-level API, so our private Codec
// gets a split pattern that matches its whole input: Count(piece) then
// merges only. The field is unexported; newPieceBPE checks its name and
// type, so a library upgrade that changes them fails loudly.
type pieceBPE struct {
	codec *codec.Codec
	cache pieceCache
}

// wholeInput matches any non-empty string in one match.
var wholeInput = regexp2.MustCompile(`(?s).+`, regexp2.None)

func newPieceBPE(c *codec.Codec) (*pieceBPE, error) {
	f := reflect.ValueOf(c).Elem().FieldByName("splitRegexp")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*regexp2.Regexp]() {
		return nil, fmt.Errorf("%w: codec.Codec has no splitRegexp *regexp2.Regexp field", errLibrary)
	}
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(reflect.ValueOf(wholeInput))
	// Pieces are valid UTF-8 (Count replaces invalid sequences first).
	c.SetErrorMode(codec.ErrorModeNone)

	b := &pieceBPE{codec: c}
	b.cache.seed = maphash.MakeSeed()
	// Self-check: "\n \n" is one token; the library's own pattern splits it.
	if n, err := c.Count("\n \n"); err != nil || n != 1 {
		return nil, fmt.Errorf("tokens: cannot install the whole-piece pattern in tiktoken-go/tokenizer (got %d, %v)", n, err)
	}
	return b, nil
}

// count takes a non-empty, valid UTF-8 piece.
func (b *pieceBPE) count(piece string) int {
	if len(piece) == 1 {
		return 1 // every byte is a token
	}
	if len(piece) > maxCachedPiece {
		return b.bpe(piece)
	}
	h := maphash.String(b.cache.seed, piece)
	if n, ok := b.cache.get(h, piece); ok {
		return n
	}
	n := b.bpe(piece)
	b.cache.put(h, &cacheEntry{piece: strings.Clone(piece), n: n})
	return n
}

func (b *pieceBPE) bpe(piece string) int {
	n, err := b.codec.Count(piece)
	if err != nil || n < 1 || n > len(piece) {
		// Unreachable: byte-level BPE yields 1 to len(piece) tokens; clamp,
		// not panic.
		return len(piece)
	}
	return n
}

// The piece cache: a lock-free table of short pieces, since text repeats
// them and a hit saves a regexp match and a BPE run. A new entry takes slot
// h and pushes the old one to h^1, so two colliding pieces coexist. Entries
// are immutable and checked, so a race loses an entry, never a count.
const (
	cacheSlots     = 1 << 15
	maxCachedPiece = 48
)

type cacheEntry struct {
	piece string
	n     int
}

type pieceCache struct {
	seed  maphash.Seed
	slots [cacheSlots]atomic.Pointer[cacheEntry]
}

func (c *pieceCache) get(h uint64, piece string) (int, bool) {
	i := h & (cacheSlots - 1)
	if e := c.slots[i].Load(); e != nil && e.piece == piece {
		return e.n, true
	}
	if e := c.slots[i^1].Load(); e != nil && e.piece == piece {
		return e.n, true
	}
	return 0, false
}

func (c *pieceCache) put(h uint64, e *cacheEntry) {
	i := h & (cacheSlots - 1)
	if old := c.slots[i].Swap(e); old != nil {
		c.slots[i^1].Store(old)
	}
}
