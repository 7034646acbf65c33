package markdown

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

func TestCellKeepsUntrustedTextInert(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain words", "plain words"},
		{"a | b", `a \| b`},
		{"two\nlines\r\n", "two lines"},
		{"@alice please look", "&#64;alice please look"},
		{"```go\nx\n```", "&#96;&#96;&#96;go x &#96;&#96;&#96;"},
		{"<!-- gns-guard:status issue=1 -->", "&lt;!-- gns-guard:status issue=1 --&gt;"},
		{"[click](http://evil)", `\[click\](http://evil)`},
		{"**bold** _em_ ~del~ # h", `\*\*bold\*\* \_em\_ \~del\~ \# h`},
		{`back\slash`, `back\\slash`},
		{"   ", "–"},
	}
	for _, c := range cases {
		if got := Cell(c.in, 0); got != c.want {
			t.Errorf("Cell(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCellShortensToVisibleCharacters(t *testing.T) {
	got := Cell(strings.Repeat("é", 50), 10)
	if got != strings.Repeat("é", 9)+"…" {
		t.Errorf("got %q", got)
	}
	if got := Cell(strings.Repeat("@", 80), 5); strings.Count(got, "&#64;") != 4 || !strings.HasSuffix(got, "…") {
		t.Errorf("got %q: 4 escaped @ and an ellipsis expected", got)
	}
}

func TestURLCannotLeaveTheLink(t *testing.T) {
	got := URL("http://h/x) [y](z|w <b>\n")
	if strings.ContainsAny(got, "() |<>\n") {
		t.Errorf("URL left Markdown or HTML syntax in %q", got)
	}
}

func TestQuoteIsOneEscapedBoundedLiteral(t *testing.T) {
	for _, in := range []string{"alice", "two\nlines", `say "hi"`, strings.Repeat("é", 70), "\u202eevil", ""} {
		got := Quote(in)
		lit, cut := strings.CutSuffix(got, "…")
		s, err := strconv.Unquote(lit)
		switch {
		case err != nil:
			t.Errorf("Quote(%q) = %s: not a Go literal (%v)", in, got, err)
		case !strings.HasPrefix(in, s) || utf8.RuneCountInString(s) > QuoteRunes:
			t.Errorf("Quote(%q) = %s: not a prefix of at most %d characters", in, got, QuoteRunes)
		case cut != (utf8.RuneCountInString(in) > QuoteRunes):
			t.Errorf("Quote(%q) = %s: the ellipsis must say the text was cut", in, got)
		case strings.ContainsAny(got, "\n\r\u202e"):
			t.Errorf("Quote(%q) = %s: a raw control character", in, got)
		}
	}
}

func TestOneLineHoldsNoBreakOrHiddenCharacter(t *testing.T) {
	for _, in := range []string{"a\nb\r\nc", "tab\there", "zero\u200bwidth", "bidi\u202eflip", "   ", "\U000E0041tag", strings.Repeat("x", 300)} {
		got := OneLine(in, 100)
		for _, r := range got {
			if unicode.IsControl(r) || Invisible(r) || r == '\n' {
				t.Errorf("OneLine(%q) = %q holds %U", in, got, r)
			}
		}
		if utf8.RuneCountInString(got) > 101 || got == "" {
			t.Errorf("OneLine(%q) = %q: empty or over 100 characters and the ellipsis", in, got)
		}
	}
}

// codeBlocks parses Markdown as Gitea does and returns its fenced blocks'
// contents.
func codeBlocks(t *testing.T, s string) []string {
	t.Helper()
	src := []byte(s)
	var out []string
	_ = ast.Walk(parser.Parser().Parse(text.NewReader(src)), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if b, ok := n.(*ast.FencedCodeBlock); ok && entering {
			var c strings.Builder
			for i := range b.Lines().Len() {
				seg := b.Lines().At(i)
				c.Write(seg.Value(src))
			}
			out = append(out, c.String())
		}
		return ast.WalkContinue, nil
	})
	return out
}

func TestFenceHoldsAnyTextWhole(t *testing.T) {
	for _, in := range []string{"plain", "```\nclose?\n```", "````` five", "~~~\nx\n~~~", "`", "ends with\n", "<!-- x -->"} {
		blocks := codeBlocks(t, Fence("", in)+"after\n")
		want := in
		if !strings.HasSuffix(want, "\n") {
			want += "\n"
		}
		if len(blocks) != 1 || blocks[0] != want {
			t.Errorf("Fence(%q) parses as %q, want one block holding the text", in, blocks)
		}
	}
}

func TestOpensAndClosesFence(t *testing.T) {
	cases := []struct {
		line, opens string
	}{{"```", "```"}, {"   ~~~~ yaml", "~~~~"}, {"    ```", ""}, {"``", ""}, {"``` a`b", ""}}
	for _, c := range cases {
		if got := OpensFence(c.line); got != c.opens {
			t.Errorf("OpensFence(%q) = %q, want %q", c.line, got, c.opens)
		}
	}
	if !ClosesFence("````  ", "```") || ClosesFence("``` x", "```") || ClosesFence("~~~", "```") {
		t.Error("ClosesFence: a longer fence closes, text after it or another character does not")
	}
}

// stripCases are the hidden-text cases of testdata/hidden.json: what
// Strip leaves of each input (want = in: nothing is hidden). TestStrip
// checks them here; internal/action's TestStripHoldsGiteasRendering holds
// them against the real server's renderer.
func stripCases(t *testing.T) []struct{ In, Want string } {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "hidden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct{ In, Want string }
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestStrip(t *testing.T) {
	for _, c := range stripCases(t) {
		got, rs := Strip(c.In)
		if got != c.Want {
			t.Errorf("Strip(%q) = %q, want %q", c.In, got, c.Want)
		}
		if (len(rs) > 0) != (c.In != c.Want) {
			t.Errorf("Strip(%q) reports %v", c.In, rs)
		}
		if again, more := Strip(got); again != got || len(more) > 0 {
			t.Errorf("Strip is not idempotent on %q: %q %v", got, again, more)
		}
	}
}

func TestStripSaysWhatAndWhere(t *testing.T) {
	_, rs := Strip("line one\u200b\n<!-- gns-guard:status issue=1 -->\nx <!-- say -->\n<!-- GNS_EVENT {} -->")
	if got := Describe(Suspicious(rs)); got != "1 invisible character (line 1); 1 HTML comment (line 3, 12 characters)" {
		t.Errorf("Describe = %q", got)
	}
	if n := len(rs) - len(Suspicious(rs)); n != 2 {
		t.Errorf("%d markers, want the status marker and the footer", n)
	}
}

// TestStripLeavesNothingHidden mixes the hidden constructs at random:
// whatever Strip leaves holds no invisible character and no HTML Gitea
// would hide outside code.
func TestStripLeavesNothingHidden(t *testing.T) {
	pieces := []string{"a", " ", "\n", "\n\n", "`", "```\n", "<!--", "-->", "<iframe>", "</iframe>", "\u200b", "\u202e", "![x](y)", "[r]: u \"t\"\n", "<b title=\"t\">", "- ", "> ", "    "}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		var b strings.Builder
		for range rng.IntN(24) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		got, _ := Strip(b.String())
		for _, r := range got {
			if Invisible(r) {
				t.Fatalf("Strip(%q) = %q keeps %U", b.String(), got, r)
			}
		}
		if again, rs := Strip(got); len(Suspicious(rs)) > 0 {
			t.Fatalf("Strip(%q) = %q, which still hides %v (%q)", b.String(), got, rs, again)
		}
	}
}
