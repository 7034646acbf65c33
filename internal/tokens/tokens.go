package tokens

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// Encoding names a tiktoken encoding.
type Encoding string

// The supported encodings.
const (
	// CL100kBase is GPT-4's and GPT-3.5-turbo's, and the default.
	CL100kBase Encoding = "cl100k_base"
	// O200kBase is GPT-4o's, GPT-4.1's, o1's, o3's and later.
	O200kBase Encoding = "o200k_base"
)

// DefaultEncoding is the encoding used when none is configured.
const DefaultEncoding = CL100kBase

// ErrUnknownEncoding: ParseEncoding and New got an unsupported name.
var ErrUnknownEncoding = errors.New("unknown token encoding")

// String returns the encoding's name.
func (e Encoding) String() string { return string(e) }

// ParseEncoding returns the Encoding named s. Surrounding spaces and letter
// case are ignored. The error for any other value names the accepted ones
// and wraps ErrUnknownEncoding.
func ParseEncoding(s string) (Encoding, error) {
	switch e := Encoding(strings.ToLower(strings.TrimSpace(s))); e {
	case CL100kBase, O200kBase:
		return e, nil
	}
	return "", unknownEncoding(s)
}

func unknownEncoding(s string) error {
	return fmt.Errorf("%w %q: accepted values are %q and %q", ErrUnknownEncoding, s, CL100kBase, O200kBase)
}

// Counter is safe for concurrent use; the zero Counter uses DefaultEncoding.
type Counter struct {
	enc Encoding
	eng *engine
}

// New returns a Counter for enc, or an error wrapping ErrUnknownEncoding.
// The first call for an encoding decodes its vocabulary (tens of
// milliseconds, a few MB of heap; see BenchmarkFirstCount); later calls
// share it and cost one small allocation.
func New(enc Encoding) (*Counter, error) {
	eng, err := loadEngine(enc)
	if err != nil {
		return nil, err
	}
	return &Counter{enc: enc, eng: eng}, nil
}

// Encoding returns the encoding c counts with.
func (c *Counter) Encoding() Encoding {
	if c == nil || c.eng == nil {
		return DefaultEncoding
	}
	return c.enc
}

// Count returns the exact number of tokens tiktoken produces for text. It
// never panics; invalid UTF-8 is counted as if each maximal invalid
// sequence were U+FFFD.
func (c *Counter) Count(text string) int {
	n, _ := c.count(context.Background(), text)
	return n
}

// checkEvery bytes between context checks: milliseconds on the slowest text.
const checkEvery = 64 << 10

// CountContext is Count that gives up within milliseconds once ctx is done,
// returning 0 and ctx's error: tens of MB take seconds. It checks ctx every
// checkEvery bytes between pieces; a long piece is counted whole on its own
// goroutine, which is not waited for.
func (c *Counter) CountContext(ctx context.Context, text string) (int, error) {
	if ctx.Done() == nil || len(text) <= checkEvery {
		return c.count(ctx, text)
	}
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := c.count(ctx, text)
		done <- result{n, err}
	}()
	select {
	case r := <-done:
		return r.n, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// count counts text, looking at ctx every checkEvery bytes.
func (c *Counter) count(ctx context.Context, text string) (int, error) {
	if text == "" {
		return 0, ctx.Err()
	}
	eng := c.engine()
	text = toValidUTF8(text)
	if eng == nil {
		// Unreachable with the pinned tokenizer library (New and the
		// tests report an incompatible one). Every token holds at least
		// one byte, so this over-estimates rather than under-counts.
		return len(text), ctx.Err()
	}
	n, next := 0, 0
	for i := 0; i < len(text); {
		if i >= next {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			next = i + checkEvery
		}
		j := eng.split(text, i)
		n += eng.bpe.count(text[i:j])
		i = j
	}
	return n, nil
}

func (c *Counter) engine() *engine {
	if c != nil && c.eng != nil {
		return c.eng
	}
	eng, _ := loadEngine(DefaultEncoding)
	return eng
}

// engine is shared by one encoding's Counters.
type engine struct {
	split splitFunc
	bpe   *pieceBPE
}

type engineSlot struct {
	once sync.Once
	eng  *engine
	err  error
}

var engines = map[Encoding]*engineSlot{
	CL100kBase: {},
	O200kBase:  {},
}

func loadEngine(enc Encoding) (*engine, error) {
	slot, ok := engines[enc]
	if !ok {
		return nil, unknownEncoding(string(enc))
	}
	slot.once.Do(func() { slot.eng, slot.err = newEngine(enc) })
	return slot.eng, slot.err
}

// newEngine decodes the embedded vocabulary (vocab.go) and builds the
// encoders.
func newEngine(enc Encoding) (*engine, error) {
	var split splitFunc
	switch enc {
	case CL100kBase:
		split = nextCl100k
	case O200kBase:
		split = nextO200k
	default:
		return nil, unknownEncoding(string(enc))
	}
	ranks, err := decodeRanks(*rankFiles[enc])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", enc, err)
	}
	c, err := newCodec(ranks)
	if err != nil {
		return nil, err
	}
	bpe, err := newPieceBPE(c)
	if err != nil {
		return nil, err
	}
	return &engine{split: split, bpe: bpe}, nil
}

// toValidUTF8 replaces each maximal invalid subsequence of s with U+FFFD
// (Unicode "best practice", used by Python's errors="replace" and by the
// WHATWG decoder). Valid input is returned as is.
func toValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/2)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
			i += maximalSubpart(s[i:])
			continue
		}
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String()
}

// maximalSubpart returns the length of the maximal subpart of an ill-formed
// sequence at the start of s (at least 1), per Unicode Table 3-7.
func maximalSubpart(s string) int {
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch c := s[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(s); n++ {
		if s[n] < lo || s[n] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return n
}
