package tokens

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// corpusText is every file of the reference corpus, concatenated in name
// order: checkpoint YAML, issue bodies, code, prose in several scripts and
// whitespace edge cases, about a quarter of a megabyte.
func corpusText(b *testing.B) string {
	b.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.txt"))
	if err != nil {
		b.Fatal(err)
	}
	if len(files) == 0 {
		b.Fatal("the reference corpus is empty")
	}
	sort.Strings(files)
	var sb strings.Builder
	for _, f := range files {
		sb.WriteString(readCorpus(b, filepath.Base(f)))
	}
	return sb.String()
}

// BenchmarkCountCorpus counts the whole reference corpus with each
// encoding; MB/s is counting throughput on mixed real-world text.
func BenchmarkCountCorpus(b *testing.B) {
	text := corpusText(b)
	for _, enc := range encodings {
		c := newCounter(b, enc)
		b.Run(string(enc), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				c.Count(text)
			}
		})
	}
}
