package archtest

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/gns-guard/gns-guard/internal/testkit"
)

// The limits the prose keeps. A comment says why in few words; a longer
// rationale belongs in docs/ and the comment links it.
const (
	maxLineChars      = 150
	maxCommentWords   = 60
	maxMedianWords    = 10
	maxSentenceWords  = 18.0
	readmePath        = "README.md"
	minCommentBlocks  = 100
	minReadmeSentence = 50
)

// commentBlock is a run of // lines or one /* */ comment.
type commentBlock struct {
	pos   string // file:line, from the repository's root
	words int
}

// productFiles lists every non-test Go file of cmd/ and internal/, leaving
// out the test kit, as paths from the repository's root.
func productFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for _, top := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if d.IsDir() {
				if rel == filepath.Join("internal", "testkit") || d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
				out = append(out, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// commentBlocks parses one file and returns its comment blocks. A //go:
// directive and a preformatted line are not prose: their words are not
// counted.
func commentBlocks(fset *token.FileSet, root, rel string) ([]commentBlock, error) {
	file, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []commentBlock
	var cur *commentBlock
	lastLine := -1
	flush := func() {
		if cur != nil && cur.words > 0 {
			out = append(out, *cur)
		}
		cur, lastLine = nil, -1
	}
	for _, group := range file.Comments {
		for _, c := range group.List {
			p := fset.Position(c.Slash)
			if strings.HasPrefix(c.Text, "//go:") {
				flush()
				continue
			}
			block := strings.HasPrefix(c.Text, "/*")
			if block || cur == nil || p.Line != lastLine+1 {
				flush()
				cur = &commentBlock{pos: fmt.Sprintf("%s:%d", rel, p.Line)}
			}
			text := strings.TrimPrefix(c.Text, "//")
			if strings.HasPrefix(text, "\t") {
				text = "" // a preformatted line (a diagram, a format) is not prose
			}
			if block {
				text = strings.TrimSuffix(strings.TrimPrefix(c.Text, "/*"), "*/")
			}
			cur.words += countWords(text)
			lastLine = fset.Position(c.End()).Line
			if block {
				flush()
			}
		}
		flush()
	}
	return out, nil
}

// countWords counts the words of text: the fields that hold a letter or a
// digit, so a list's dash or a lone dash is none.
func countWords(text string) int {
	n := 0
	for _, f := range strings.Fields(text) {
		if strings.IndexFunc(f, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			n++
		}
	}
	return n
}

// longLines returns file:line of every line of one file over maxLineChars.
func longLines(root, rel string) ([]string, error) {
	f, err := os.Open(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if chars := len([]rune(sc.Text())); chars > maxLineChars {
			out = append(out, fmt.Sprintf("%s:%d (%d characters)", rel, n, chars))
		}
	}
	return out, sc.Err()
}

var (
	markdownLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	onlyLinks    = regexp.MustCompile(`^(\s*!?\[[^\]]*\]\([^)]*\)\s*)+$`)
	htmlComment  = regexp.MustCompile(`<!--.*?-->`)
	listItem     = regexp.MustCompile(`^\s*([-*+]|\d+[.)])\s+`)
	sentenceEnd  = regexp.MustCompile(`[.!?]["')\]*_]*(\s+|$)`)
)

// readmeSentences returns the word count of each sentence of the README's
// prose. Code blocks, tables, headings, HTML and lines of links alone are
// left out. A blank line or a list item ends a sentence, as does a full
// stop, question or exclamation mark followed by a space.
func readmeSentences(text string) []int {
	var chunks []string
	var para strings.Builder
	end := func() {
		if para.Len() > 0 {
			chunks = append(chunks, para.String())
			para.Reset()
		}
	}
	fence := "" // the open code fence, "" outside one
	for line := range strings.SplitSeq(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, trimmed[:1]))]
			end()
			continue
		case fence != "":
			if strings.TrimRight(trimmed, fence[:1]) == "" && len(trimmed) >= len(fence) {
				fence = ""
			}
			continue
		case trimmed == "", strings.HasPrefix(trimmed, "#"), strings.HasPrefix(trimmed, "|"),
			strings.HasPrefix(trimmed, "<") && !strings.HasPrefix(trimmed, "<!--"):
			end()
			continue
		case onlyLinks.MatchString(trimmed):
			continue
		case listItem.MatchString(line):
			end()
			line = listItem.ReplaceAllString(line, "")
		}
		line = htmlComment.ReplaceAllString(line, "")
		line = strings.ReplaceAll(line, "...", "…") // an ellipsis ends no sentence
		para.WriteString(markdownLink.ReplaceAllString(line, "$1"))
		para.WriteString(" ")
	}
	end()
	var out []int
	for _, chunk := range chunks {
		for _, s := range sentenceEnd.Split(chunk, -1) {
			if n := countWords(s); n > 0 {
				out = append(out, n)
			}
		}
	}
	return out
}

// TestProse holds production code to short lines and short comments (a
// median of 10 words, none over 60), and the README to short sentences. It logs the figures every run, so their
// trend is in every CI log.
func TestProse(t *testing.T) {
	root, err := testkit.Root()
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var blocks []commentBlock
	long := 0
	for _, rel := range productFiles(t, root) {
		lines, err := longLines(root, rel)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			long++
			t.Errorf("%s: over %d characters: wrap it", l, maxLineChars)
		}
		bs, err := commentBlocks(fset, root, rel)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, bs...)
	}
	if len(blocks) < minCommentBlocks {
		t.Fatalf("found only %d comment blocks under %s: is the walk wrong?", len(blocks), root)
	}
	words, over := make([]int, 0, len(blocks)), 0
	for _, b := range blocks {
		words = append(words, b.words)
		if b.words > maxCommentWords {
			over++
			t.Errorf("%s: a comment of %d words, over %d: say why in fewer, or link docs/", b.pos, b.words, maxCommentWords)
		}
	}
	slices.Sort(words)
	median := words[len(words)/2]
	if median > maxMedianWords {
		t.Errorf("the median comment block is %d words, over %d: say why in fewer words", median, maxMedianWords)
	}

	readme, err := os.ReadFile(filepath.Join(root, readmePath))
	if err != nil {
		t.Fatal(err)
	}
	sentences := readmeSentences(string(readme))
	if len(sentences) < minReadmeSentence {
		t.Fatalf("found only %d sentences in %s: is the reading wrong?", len(sentences), readmePath)
	}
	total := 0
	for _, n := range sentences {
		total += n
	}
	avg := float64(total) / float64(len(sentences))
	if avg > maxSentenceWords {
		t.Errorf("%s averages %.1f words a sentence, over %.0f: split and tighten", readmePath, avg, maxSentenceWords)
	}

	t.Logf("\ncomment blocks: %d, median %d words (limit %d); over %d words: %d\n"+
		"lines over %d characters: %d\n%s: %d sentences, %.1f words a sentence",
		len(blocks), median, maxMedianWords, maxCommentWords, over, maxLineChars, long, readmePath, len(sentences), avg)
}
