package tokens

import (
	"bytes"
	"compress/gzip"
	_ "embed" // the vocabularies
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"unsafe"

	"github.com/tiktoken-go/tokenizer/codec"
)

// The vocabularies, compressed: the library's map literals weigh 7 MB. We
// never call their constructors, so the linker drops them, and decode
// gzip streams of 0.5 and 1.1 MB on first use. They are written by
//
//	go test ./internal/tokens -run TestVocabularyMatchesLibrary -update
//
// which also fails when they differ. Format: a uvarint token count, then
// each token by rank as a length byte and its bytes.
var (
	//go:embed cl100k_base.ranks.gz
	cl100kRanks []byte
	//go:embed o200k_base.ranks.gz
	o200kRanks []byte
)

// rankFiles are the embedded vocabularies by encoding.
var rankFiles = map[Encoding]*[]byte{
	CL100kBase: &cl100kRanks,
	O200kBase:  &o200kRanks,
}

// maxVocabulary bounds the token count a vocabulary file may declare, and
// maxVocabularyBytes its decompressed size, far above o200k_base's 199,998
// tokens in 1.6 MB, so a corrupt file cannot make decodeRanks allocate
// without limit.
const (
	maxVocabulary      = 1 << 20
	maxVocabularyBytes = 64 << 20
)

// decodeRanks decodes a vocabulary file into a map from token to rank. One
// goroutine inflates while this one fills the map, so the first Count waits
// for the longer of the two, not their sum. Tokens share one buffer, each
// part written once before it is read.
func decodeRanks(file []byte) (map[string]uint, error) {
	if len(file) < 4 {
		return nil, errors.New("tokens: vocabulary: not a gzip file")
	}
	zr, err := gzip.NewReader(bytes.NewReader(file))
	if err != nil {
		return nil, fmt.Errorf("tokens: vocabulary: %w", err)
	}
	// gzip's trailer ends with the decompressed size (mod 4 GiB); the
	// inflater checks it, and the CRC, at the end of the stream.
	size := int(binary.LittleEndian.Uint32(file[len(file)-4:]))
	if size == 0 || size > maxVocabularyBytes {
		return nil, fmt.Errorf("tokens: vocabulary: %d bytes", size)
	}
	buf := make([]byte, size)
	filled := make(chan int, 16) // how much of buf is inflated, as it grows
	var inflateErr error         // read after filled is closed
	go func() {
		defer close(filled)
		n := 0
		for n < len(buf) {
			m, err := zr.Read(buf[n:])
			if n += m; m > 0 {
				filled <- n
			}
			if err == io.EOF {
				return // short: the reader finds the tokens cut short
			}
			if err != nil {
				inflateErr = err
				return
			}
		}
		if m, err := zr.Read(make([]byte, 1)); m > 0 || err != io.EOF {
			inflateErr = fmt.Errorf("more than the %d bytes the trailer says (%v)", size, err)
		}
	}()
	ranks, err := readRanks(buf, filled)
	for range filled { // let the inflater finish
	}
	if inflateErr != nil {
		return nil, fmt.Errorf("tokens: vocabulary: %w", inflateErr)
	}
	return ranks, err
}

// readRanks reads tokens off buf up to filled.
func readRanks(buf []byte, filled <-chan int) (map[string]uint, error) {
	avail := 0
	have := func(n int) bool {
		for avail < n {
			v, ok := <-filled
			if !ok {
				return false
			}
			avail = v
		}
		return true
	}
	// The token count: a uvarint of at most 10 bytes.
	have(min(len(buf), binary.MaxVarintLen64))
	n, i := binary.Uvarint(buf[:avail])
	if i <= 0 {
		return nil, errors.New("tokens: vocabulary: no token count")
	}
	if n == 0 || n > maxVocabulary {
		return nil, fmt.Errorf("tokens: vocabulary: %d tokens", n)
	}
	ranks := make(map[string]uint, n)
	for rank := range uint(n) {
		if !have(i + 1) {
			return nil, fmt.Errorf("tokens: vocabulary: %d tokens, want %d", rank, n)
		}
		l := int(buf[i])
		i++
		if l == 0 || !have(i+l) {
			return nil, fmt.Errorf("tokens: vocabulary: token %d is cut short", rank)
		}
		ranks[unsafe.String(&buf[i], l)] = rank
		i += l
	}
	if have(i+1) || i != len(buf) {
		return nil, fmt.Errorf("tokens: vocabulary: %d bytes after the last token", len(buf)-i)
	}
	if len(ranks) != int(n) {
		return nil, fmt.Errorf("tokens: vocabulary: %d tokens, %d of them distinct", n, len(ranks))
	}
	return ranks, nil
}

// errLibrary: the pinned library changed what newCodec relies on.
var errLibrary = errors.New("tokens: unsupported tiktoken-go/tokenizer version")

// newCodec returns a codec.Codec that merges with the vocabulary ranks.
// The library exports no constructor taking a vocabulary, so the
// unexported field is set through reflection; the field's name and type
// are checked first, and a library upgrade that changes them makes New
// return an error (and the tests fail) rather than misbehave.
func newCodec(ranks map[string]uint) (*codec.Codec, error) {
	c := new(codec.Codec)
	f := reflect.ValueOf(c).Elem().FieldByName("vocabulary")
	if !f.IsValid() || f.Kind() != reflect.Map || f.Type().Key().Kind() != reflect.String || f.Type().Elem().Kind() != reflect.Uint {
		return nil, fmt.Errorf("%w: codec.Codec has no vocabulary map[string]uint field", errLibrary)
	}
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(reflect.ValueOf(ranks).Convert(f.Type()))
	return c, nil
}
