package tokens

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// The reference corpus and its expected counts were produced with OpenAI's
// tiktoken (npm package "tiktoken"); see testdata/tokens/README.md.
const corpusDir = "../../testdata/tokens"

var encodings = []Encoding{CL100kBase, O200kBase}

func newCounter(t testing.TB, enc Encoding) *Counter {
	t.Helper()
	c, err := New(enc)
	if err != nil {
		t.Fatalf("New(%q): %v", enc, err)
	}
	return c
}

func readJSON(t testing.TB, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpusDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func readCorpus(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpusDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestCorpus checks every corpus file against tiktoken's counts.
func TestCorpus(t *testing.T) {
	var expected map[string]map[Encoding]int
	readJSON(t, "expected.json", &expected)

	files, err := filepath.Glob(filepath.Join(corpusDir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 || len(files) != len(expected) {
		t.Fatalf("%d corpus files, %d entries in expected.json: regenerate expected.json", len(files), len(expected))
	}
	for _, enc := range encodings {
		c := newCounter(t, enc)
		for _, f := range files {
			name := filepath.Base(f)
			want, ok := expected[name][enc]
			if !ok {
				t.Errorf("%s: no %s count in expected.json", name, enc)
				continue
			}
			if got := c.Count(readCorpus(t, name)); got != want {
				t.Errorf("%s %s: Count = %d, tiktoken = %d", name, enc, got, want)
			}
		}
	}
}

// refCase is one entry of testdata/tokens/cases.json: the input is
// prefix + text*repeat + suffix, or the raw bytes in hex.
type refCase struct {
	Name   string `json:"name"`
	Text   string `json:"text"`
	Prefix string `json:"prefix"`
	Suffix string `json:"suffix"`
	Repeat int    `json:"repeat"`
	Hex    string `json:"hex"`
	CL100k int    `json:"cl100k_base"`
	O200k  int    `json:"o200k_base"`
}

func (rc refCase) input(t testing.TB) string {
	if rc.Hex != "" {
		b, err := hex.DecodeString(rc.Hex)
		if err != nil {
			t.Fatalf("%s: %v", rc.Name, err)
		}
		return string(b)
	}
	return rc.Prefix + strings.Repeat(rc.Text, max(rc.Repeat, 1)) + rc.Suffix
}

func (rc refCase) want(enc Encoding) int {
	if enc == O200kBase {
		return rc.O200k
	}
	return rc.CL100k
}

func readCases(t testing.TB) []refCase {
	var cases []refCase
	readJSON(t, "cases.json", &cases)
	if len(cases) < 100 {
		t.Fatalf("only %d cases in cases.json", len(cases))
	}
	return cases
}

// TestReferenceCases checks short edge cases (whitespace and newline runs,
// NUL, contractions, invalid UTF-8, ...) against tiktoken's counts.
func TestReferenceCases(t *testing.T) {
	cases := readCases(t)
	for _, enc := range encodings {
		c := newCounter(t, enc)
		for _, rc := range cases {
			if got, want := c.Count(rc.input(t)), rc.want(enc); got != want {
				t.Errorf("%q %s: Count = %d, tiktoken = %d", rc.Name, enc, got, want)
			}
		}
	}
}

// refPattern is a regexp2 interpreter build of tiktoken's pattern for enc,
// used as an independent oracle for the hand-written pre-tokenizer. The
// pattern is wrapped in a group so that regexp2 does not pick the
// tokenizer library's pre-generated (and buggy) matcher for the same
// pattern string, and U+007F is added explicitly to the two negated classes
// that regexp2 v2.5.1 builds without it.
func refPattern(enc Encoding) *regexp2.Regexp {
	pat := map[Encoding]string{
		CL100kBase: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
		O200kBase: `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
			`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
			`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	}[enc]
	pat = strings.ReplaceAll(pat, `[^\s\p{L}\p{N}]`, `(?:[^\s\p{L}\p{N}]|\x7f)`)
	pat = strings.ReplaceAll(pat, `[^\r\n\p{L}\p{N}]`, `(?:[^\r\n\p{L}\p{N}]|\x7f)`)
	return regexp2.MustCompile("(?:"+pat+")", regexp2.OptionMaxBacktrackingStackSize(-1))
}

func refPieces(t testing.TB, re *regexp2.Regexp, s string) []string {
	var out []string
	m, err := re.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		t.Fatalf("reference pattern: %v", err)
	}
	return out
}

func ourPieces(t testing.TB, enc Encoding, s string) []string {
	split := map[Encoding]splitFunc{CL100kBase: nextCl100k, O200kBase: nextO200k}[enc]
	var out []string
	for i := 0; i < len(s); {
		j := split(s, i)
		if j <= i || j > len(s) || !utf8.ValidString(s[i:j]) {
			t.Fatalf("%s: split(%q, %d) = %d", enc, s, i, j)
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// TestPiecesMatchReferencePattern compares the pre-tokenizer with the
// regexp oracle on the whole corpus and every reference case.
func TestPiecesMatchReferencePattern(t *testing.T) {
	var inputs []string
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.txt"))
	for _, f := range files {
		inputs = append(inputs, readCorpus(t, filepath.Base(f)))
	}
	for _, rc := range readCases(t) {
		inputs = append(inputs, toValidUTF8(rc.input(t)))
	}
	for _, enc := range encodings {
		re := refPattern(enc)
		for _, s := range inputs {
			if got, want := ourPieces(t, enc, s), refPieces(t, re, s); !slices.Equal(got, want) {
				t.Errorf("%s pieces of %.60q...:\n got %q\nwant %q", enc, s, got, want)
			}
		}
	}
}

func TestCountEdgeCases(t *testing.T) {
	for _, enc := range encodings {
		c := newCounter(t, enc)
		if got := c.Count(""); got != 0 {
			t.Errorf("%s: Count(\"\") = %d", enc, got)
		}
		if got := c.Count("\x00"); got != 1 {
			t.Errorf("%s: Count(NUL) = %d", enc, got)
		}
		// Invalid UTF-8 counts like its U+FFFD replacement.
		for _, s := range []string{"\xff", "\xe2\x82", "a\xed\xa0\x80b", "\xf4\x90\x80\x80", strings.Repeat("\xc3", 1000)} {
			got := c.Count(s)
			if want := c.Count(toValidUTF8(s)); got != want || got < 1 {
				t.Errorf("%s: Count(%q) = %d, Count(replaced) = %d", enc, s, got, want)
			}
		}
	}
	if got, want := toValidUTF8("a\xe2\x82b\xf0\x80A\xed\xa0\x80"), "a\uFFFDb\uFFFD\uFFFDA\uFFFD\uFFFD\uFFFD"; got != want {
		t.Errorf("toValidUTF8 = %q, want %q", got, want)
	}
}

// TestCountLargeInputs feeds inputs that are hard for regexp-based
// pre-tokenizers: a whitespace run is a single BPE piece however long it
// is. The library's BPE needs about 0.6 s per MiB of such a piece, so the
// 10 MiB run is only tried with GNS_TOKENS_HUGE=1.
func TestCountLargeInputs(t *testing.T) {
	spaces := 2 << 20
	if os.Getenv("GNS_TOKENS_HUGE") != "" {
		spaces = 10 << 20
	}
	c := newCounter(t, CL100kBase)
	for _, s := range []string{
		strings.Repeat(" ", spaces),
		strings.Repeat("  \n", 1<<18),
		strings.Repeat("\xff\x00", 1<<19),
	} {
		start := time.Now()
		n := c.Count(s)
		if n < 1 || n > len(toValidUTF8(s)) {
			t.Errorf("Count(%d bytes) = %d", len(s), n)
		}
		t.Logf("%d bytes starting %.12q: %d tokens in %v", len(s), s, n, time.Since(start))
	}
}

func TestParseEncoding(t *testing.T) {
	for in, want := range map[string]Encoding{
		"cl100k_base":   CL100kBase,
		"o200k_base":    O200kBase,
		" O200K_BASE\n": O200kBase,
	} {
		if got, err := ParseEncoding(in); got != want || err != nil {
			t.Errorf("ParseEncoding(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "gpt-4o", "p50k_base", "cl100k", "o200k_basex"} {
		got, err := ParseEncoding(in)
		if err == nil || got != "" {
			t.Errorf("ParseEncoding(%q) = %q, %v; want error", in, got, err)
			continue
		}
		if !errors.Is(err, ErrUnknownEncoding) || !strings.Contains(err.Error(), "cl100k_base") || !strings.Contains(err.Error(), "o200k_base") {
			t.Errorf("ParseEncoding(%q) error %q does not name the accepted values", in, err)
		}
	}
}

func TestNew(t *testing.T) {
	if c, err := New("r50k_base"); c != nil || !errors.Is(err, ErrUnknownEncoding) {
		t.Errorf("New(r50k_base) = %v, %v", c, err)
	}
	for _, enc := range encodings {
		c := newCounter(t, enc)
		if c.Encoding() != enc {
			t.Errorf("Encoding() = %q, want %q", c.Encoding(), enc)
		}
		start := time.Now()
		for range 1000 {
			newCounter(t, enc)
		}
		if d := time.Since(start); d > 100*time.Millisecond {
			t.Errorf("1000 cached New(%s) took %v", enc, d)
		}
	}
	var zero Counter
	if zero.Encoding() != DefaultEncoding || zero.Count("hello world") != 2 {
		t.Errorf("zero Counter: %q, %d", zero.Encoding(), zero.Count("hello world"))
	}
}

func TestConcurrentCount(t *testing.T) {
	var expected map[string]map[Encoding]int
	readJSON(t, "expected.json", &expected)
	body := readCorpus(t, "30-issue-body-20k.txt")
	var wg sync.WaitGroup
	for g := range 8 {
		enc := encodings[g%2]
		want := expected["30-issue-body-20k.txt"][enc]
		wg.Go(func() {
			c, err := New(enc)
			if err != nil {
				t.Error(err)
				return
			}
			for range 5 {
				if got := c.Count(body); got != want {
					t.Errorf("%s: concurrent Count = %d, want %d", enc, got, want)
				}
			}
		})
	}
	wg.Wait()
}

// FuzzCount checks properties that hold for any input: no panic, 0 only
// for "", at least one and at most one token per byte of the (U+FFFD
// replaced) text, invalid UTF-8 counts like its replacement, and the
// pre-tokenizer agrees with the regexp oracle.
func FuzzCount(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.txt"))
	for _, file := range files {
		data, _ := os.ReadFile(file)
		f.Add(string(data[:min(len(data), 512)]))
	}
	for _, s := range []string{"", "\n \n", "a\x7fb", "\xff\xfe", "ſ's", "\u0301x", "ABCdef'S", " \t\r\n\u00a0\u3000"} {
		f.Add(s)
	}
	counters := []*Counter{newCounter(f, CL100kBase), newCounter(f, O200kBase)}
	oracles := []*regexp2.Regexp{refPattern(CL100kBase), refPattern(O200kBase)}
	f.Fuzz(func(t *testing.T, s string) {
		valid := toValidUTF8(s)
		for k, c := range counters {
			n := c.Count(s)
			switch {
			case s == "" && n != 0,
				s != "" && n < 1,
				n > len(valid):
				t.Fatalf("%s: Count(%q) = %d", c.Encoding(), s, n)
			}
			if valid != s {
				if m := c.Count(valid); m != n {
					t.Fatalf("%s: Count(%q) = %d but Count(replaced) = %d", c.Encoding(), s, n, m)
				}
			}
			if len(valid) <= 4096 {
				got, want := ourPieces(t, c.Encoding(), valid), refPieces(t, oracles[k], valid)
				if !slices.Equal(got, want) {
					t.Fatalf("%s pieces of %q:\n got %q\nwant %q", c.Encoding(), valid, got, want)
				}
			}
		}
	})
}

func benchInputs(b testing.TB) []struct {
	name string
	text string
} {
	repeatTo := func(parts []string, size int) string {
		var sb strings.Builder
		for sb.Len() < size {
			for _, p := range parts {
				sb.WriteString(p)
			}
		}
		s := sb.String()[:size]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		return s
	}
	checkpoint := []string{
		readCorpus(b, "01-checkpoint-yaml.txt"),
		readCorpus(b, "02-checkpoint-block-scalars.txt"),
		readCorpus(b, "03-yaml-indented-blank-lines.txt"),
		readCorpus(b, "05-yaml-block-scalar-indented-blanks.txt"),
		readCorpus(b, "40-yaml-anchors-comments.txt"),
	}
	return []struct {
		name string
		text string
	}{
		{"checkpoint-4KiB", repeatTo(checkpoint, 4<<10)},
		{"checkpoint-64KiB", repeatTo(checkpoint, 64<<10)},
		{"body-1MB", repeatTo([]string{readCorpus(b, "30-issue-body-20k.txt")}, 1<<20)},
	}
}

// BenchmarkCount measures throughput on checkpoint YAML and a large issue
// body. The piece cache is warm after the first iteration, as in a
// long-running process; the "cold" variant clears it before every count.
func BenchmarkCount(b *testing.B) {
	inputs := benchInputs(b)
	for _, enc := range encodings {
		c := newCounter(b, enc)
		for _, in := range inputs {
			b.Run(string(enc)+"/"+in.name, func(b *testing.B) {
				b.SetBytes(int64(len(in.text)))
				b.ReportAllocs()
				for b.Loop() {
					c.Count(in.text)
				}
			})
		}
		in := inputs[len(inputs)-1]
		b.Run(string(enc)+"/"+in.name+"-cold", func(b *testing.B) {
			b.SetBytes(int64(len(in.text)))
			b.ReportAllocs()
			for b.Loop() {
				clear(c.eng.bpe.cache.slots[:])
				c.Count(in.text)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 20000: "20,000", 1234567: "1,234,567", -1234: "-1,234", -999: "-999"} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}

// CountContext counts as Count, and a cancelled context stops it with the
// context's error instead of a count.
func TestCountContext(t *testing.T) {
	c, err := New(CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("hello world, token counts ", 20000)
	n, err := c.CountContext(context.Background(), text)
	if err != nil || n != c.Count(text) {
		t.Fatalf("CountContext = %d, %v; Count = %d", n, err, c.Count(text))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, s := range []string{text, strings.Repeat("a", 1<<20)} {
		if n, err := c.CountContext(ctx, s); !errors.Is(err, context.Canceled) || n != 0 {
			t.Errorf("cancelled: CountContext = %d, %v; want 0 and context.Canceled", n, err)
		}
	}
}
