package tokens

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/tiktoken-go/tokenizer/codec"
)

var update = flag.Bool("update", false, "write the embedded vocabularies from tiktoken-go/tokenizer's")

// libraryCodecs are the library's own codecs, whose vocabularies the
// embedded files copy. Only the tests link them.
var libraryCodecs = map[Encoding]func() *codec.Codec{
	CL100kBase: codec.NewCl100kBase,
	O200kBase:  codec.NewO200kBase,
}

// rankFileNames are the files embedded in vocab.go.
var rankFileNames = map[Encoding]string{
	CL100kBase: "cl100k_base.ranks.gz",
	O200kBase:  "o200k_base.ranks.gz",
}

// libraryRanks returns a codec's vocabulary, token to rank.
func libraryRanks(t testing.TB, c *codec.Codec) map[string]uint {
	t.Helper()
	f := reflect.ValueOf(c).Elem().FieldByName("vocabulary")
	if !f.IsValid() || f.Kind() != reflect.Map {
		t.Fatal("codec.Codec has no vocabulary map")
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Convert(reflect.TypeFor[map[string]uint]()).Interface().(map[string]uint)
}

// encodeRanks writes a vocabulary in the format decodeRanks reads.
func encodeRanks(w io.Writer, name string, ranks map[string]uint) error {
	byRank := make([]string, len(ranks))
	for tok, rank := range ranks {
		if rank >= uint(len(ranks)) || byRank[rank] != "" {
			return fmt.Errorf("%s: the ranks are not 0..%d, each once (rank %d)", name, len(ranks)-1, rank)
		}
		if len(tok) == 0 || len(tok) > 255 {
			return fmt.Errorf("%s: token %d is %d bytes, want 1..255", name, rank, len(tok))
		}
		byRank[rank] = tok
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	zw.Name = name // zcat -N, file(1) name the encoding
	bw := bufio.NewWriter(zw)
	bw.Write(binary.AppendUvarint(nil, uint64(len(byRank))))
	for _, tok := range byRank {
		bw.WriteByte(byte(len(tok)))
		bw.WriteString(tok)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

// TestVocabularyMatchesLibrary checks that each embedded vocabulary is
// exactly the library's: the same tokens with the same ranks. With
// -update it first writes the files from the library's vocabularies.
func TestVocabularyMatchesLibrary(t *testing.T) {
	for _, enc := range encodings {
		t.Run(string(enc), func(t *testing.T) {
			want := libraryRanks(t, libraryCodecs[enc]())
			if *update {
				var buf bytes.Buffer
				if err := encodeRanks(&buf, string(enc), want); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(rankFileNames[enc], buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s: %d tokens, %d bytes; rebuild to embed it", rankFileNames[enc], len(want), buf.Len())
				*rankFiles[enc] = buf.Bytes()
			}
			got, err := decodeRanks(*rankFiles[enc])
			if err != nil {
				t.Fatalf("%v (go test ./internal/tokens -run TestVocabularyMatchesLibrary -update writes the file)", err)
			}
			if len(got) != len(want) {
				t.Errorf("%s holds %d tokens, the library's %s %d (-update writes it)", rankFileNames[enc], len(got), enc, len(want))
			}
			bad := 0
			for tok, rank := range want {
				if r, ok := got[tok]; !ok || r != rank {
					if bad++; bad <= 5 {
						t.Errorf("token %q: rank %d (found %v) in %s, %d in the library (-update writes it)", tok, r, ok, rankFileNames[enc], rank)
					}
				}
			}
			if bad > 5 {
				t.Errorf("... %d tokens differ in all", bad)
			}
		})
	}
}

// TestLibraryVocabulariesNotLinked checks that the package's own code
// calls none of the library's constructors: each would link a vocabulary's
// map literal into the binary again (megabytes), beside the embedded copy.
func TestLibraryVocabulariesNotLinked(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "codec" && strings.HasPrefix(sel.Sel.Name, "New") {
					t.Errorf("%s: codec.%s links the library's vocabulary; use the embedded one (vocab.go)", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
}

func gzipped(t *testing.T, raw []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(raw)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// withSize returns a gzip file whose trailer says n bytes.
func withSize(file []byte, n uint32) []byte {
	out := bytes.Clone(file)
	binary.LittleEndian.PutUint32(out[len(out)-4:], n)
	return out
}

func TestDecodeRanks(t *testing.T) {
	ok := gzipped(t, []byte("\x03\x01a\x01b\x02ab"))
	got, err := decodeRanks(ok)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]uint{"a": 0, "b": 1, "ab": 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("decodeRanks = %v, want %v", got, want)
	}

	for _, c := range []struct {
		name string
		file []byte
		want string
	}{
		{"not gzip", []byte("\x03\x01a\x01b\x02ab"), "vocabulary"},
		{"corrupt stream", ok[:len(ok)-6], "vocabulary"},
		{"empty", gzipped(t, nil), "0 bytes"},
		{"short file", []byte{0x1f, 0x8b}, "not a gzip file"},
		{"size understated", withSize(gzipped(t, []byte("\x03\x01a\x01b\x02ab")), 6), "more than the 6 bytes"},
		{"size overstated", withSize(gzipped(t, []byte("\x03\x01a\x01b\x02ab")), 9), "vocabulary"},
		{"no tokens", gzipped(t, []byte{0}), "0 tokens"},
		{"huge count", gzipped(t, binary.AppendUvarint(nil, 1<<40)), "tokens"},
		{"too few", gzipped(t, []byte("\x04\x01a\x01b\x02ab")), "3 tokens, want 4"},
		{"cut short", gzipped(t, []byte("\x03\x01a\x01b\x05ab")), "token 2 is cut short"},
		{"empty token", gzipped(t, []byte("\x03\x01a\x00\x02ab")), "token 1 is cut short"},
		{"trailing", gzipped(t, []byte("\x03\x01a\x01b\x02abc")), "1 bytes after the last token"},
		{"repeated", gzipped(t, []byte("\x03\x01a\x01b\x01a")), "3 tokens, 2 of them distinct"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := decodeRanks(c.file); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("decodeRanks: %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// BenchmarkFirstCount is what the first Count of an encoding costs in a
// fresh process: decoding the embedded vocabulary into the library's map
// and setting up the encoder, then counting a short text.
func BenchmarkFirstCount(b *testing.B) {
	for _, enc := range encodings {
		b.Run(string(enc), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				eng, err := newEngine(enc)
				if err != nil {
					b.Fatal(err)
				}
				if n := (&Counter{enc: enc, eng: eng}).Count("Hello, world!"); n != 4 {
					b.Fatalf("Count = %d, want 4", n)
				}
			}
		})
	}
}
