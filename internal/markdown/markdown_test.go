package markdown

import (
	"strings"
	"testing"
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
