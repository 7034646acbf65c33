package checkpoint

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestYAMLBlocks(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		want  []string // contents of the yaml blocks found
		lines []int    // body line of each block's first content line
	}{
		{"backticks", "a\n```yaml\nx: 1\n```\nb\n", []string{"x: 1\n"}, []int{3}},
		{"tildes and yml", "~~~yml\nx: 1\n~~~\n", []string{"x: 1\n"}, []int{2}},
		{"info case", "```YAML\nx: 1\n```\n", []string{"x: 1\n"}, []int{2}},
		{"other language ignored", "```json\n{}\n```\n```yaml\nx: 1\n```\n", []string{"x: 1\n"}, []int{5}},
		{"longer closing fence", "````yaml\nx: 1\n```\nstill\n`````\n", []string{"x: 1\n```\nstill\n"}, []int{2}},
		{"tilde does not close backtick", "```yaml\nx: 1\n~~~\n```\n", []string{"x: 1\n~~~\n"}, []int{2}},
		{"unclosed runs to end", "```yaml\nx: 1\ny: 2", []string{"x: 1\ny: 2"}, []int{2}},
		{"indented fence strips indentation", "  ```yaml\n  x: 1\n   y: 2\n  ```\n", []string{"x: 1\n y: 2\n"}, []int{2}},
		{"four spaces is code, not a fence", "    ```yaml\n    x: 1\n    ```\n", nil, nil},
		{"crlf", "```yaml\r\nx: 1\r\n```\r\n", []string{"x: 1\n"}, []int{2}},
		{"yaml inside other fence is not a block", "```md\n```yaml\nx: 1\n```\n", nil, nil},
		{"empty", "", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blocks := YAMLBlocks(tt.body)
			if len(blocks) != len(tt.want) {
				t.Fatalf("found %d blocks, want %d", len(blocks), len(tt.want))
			}
			for i, b := range blocks {
				if got := b.Content(); got != tt.want[i] {
					t.Errorf("block %d content = %q, want %q", i, got, tt.want[i])
				}
				if b.Line != tt.lines[i] {
					t.Errorf("block %d line = %d, want %d", i, b.Line, tt.lines[i])
				}
			}
		})
	}
}

// TestReplaceChangesNothingOutside rewrites the checkpoint block of many
// generated bodies and checks every byte outside the block is unchanged.
func TestReplaceChangesNothingOutside(t *testing.T) {
	pieces := []string{
		"text\n", "# heading\n", "\n", "\r\n", "   \n", "```go\nfunc(){}\n```\n", "~~~\nplain\n~~~\n",
		"```yaml\nother: 1\n```\n", "- list\n", "> quote\n", "`inline` code\n", "trailing\n", "🔄 emoji\n",
		"<!-- comment -->\n", "````\n```yaml\nfake: 1\n```\n````\n",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		var pre, post strings.Builder
		for range rng.IntN(6) {
			pre.WriteString(pieces[rng.IntN(len(pieces))])
		}
		for range rng.IntN(6) {
			post.WriteString(pieces[rng.IntN(len(pieces))])
		}
		nl := "\n"
		if rng.IntN(3) == 0 {
			nl = "\r\n"
		}
		fence := []string{"```", "~~~", "````"}[rng.IntN(3)]
		indent := strings.Repeat(" ", rng.IntN(4))
		p := pre.String()
		if p != "" && !strings.HasSuffix(p, "\n") {
			p += "\n"
		}
		block := indent + fence + "yaml" + nl + indent + "checkpoint:" + nl + indent + "  version: 2" + nl + indent + fence + nl
		body := p + block + post.String()
		blocks := Find(body, 0)
		if len(blocks) != 1 {
			t.Fatalf("case %d: found %d checkpoint blocks in %q", i, len(blocks), body)
		}
		b := blocks[0]
		out := b.Replace("checkpoint:\n  version: 2\n  phase: new\n")
		if !strings.HasPrefix(out, body[:b.ContentStart]) {
			t.Fatalf("case %d: bytes before the block changed:\n%q\n%q", i, body, out)
		}
		if !strings.HasSuffix(out, body[b.ContentEnd:]) {
			t.Fatalf("case %d: bytes after the block changed:\n%q\n%q", i, body, out)
		}
		again := Find(out, 0)
		if len(again) != 1 || again[0].Content() != "checkpoint:\n  version: 2\n  phase: new\n" {
			t.Fatalf("case %d: the rewritten block does not read back: %q", i, out)
		}
		if strings.Contains(out[again[0].ContentStart:again[0].ContentEnd], "\n") && nl == "\r\n" &&
			strings.Count(out[again[0].ContentStart:again[0].ContentEnd], "\r\n") != 3 {
			t.Fatalf("case %d: the block lost its CRLF line ends: %q", i, out)
		}
	}
}

func TestReplaceClosesUnclosedFence(t *testing.T) {
	body := "intro\n```yaml\ncheckpoint:\n  version: 2\n"
	b := Find(body, 0)[0]
	out := b.Replace("checkpoint:\n  version: 2\n")
	if out != "intro\n```yaml\ncheckpoint:\n  version: 2\n```\n" {
		t.Fatalf("got %q", out)
	}
}
