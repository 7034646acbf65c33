package checkpoint

import (
	"strings"
	"testing"
	"time"
)

const good = "checkpoint:\n" +
	"  version: 2\n" +
	"  issue: 7\n" +
	"  phase: build\n" +
	"  depth: 1\n" +
	"  last_agent: dev\n" +
	"  last_invocation: inv-1\n" +
	"  budget: {total: 100, consumed: 30, remaining: 70}\n" +
	"  state: {labels: [cascade::depth-1], assignee: dev}\n" +
	"  next_agent: reviewer\n" +
	"  next_estimated_tokens: 10\n" +
	"  created_at: \"2026-05-16T12:50:00Z\"\n"

func TestParseValid(t *testing.T) {
	r := Parse("# t\n\n```yaml\n"+good+"```\n", Options{Issue: 7})
	if !r.Valid() || len(r.Findings) != 0 {
		t.Fatalf("valid=%v findings=%v", r.Valid(), r.Findings)
	}
	cp := r.Checkpoint
	if cp.Budget.Remaining.Value != 70 || cp.Depth.Value != 1 || cp.NextAgent.Value != "reviewer" {
		t.Fatalf("decoded wrong values: %+v", cp)
	}
	// Positions count in the body: the block starts on line 4.
	if cp.Depth.Pos != (Pos{Line: 8, Col: 10}) {
		t.Errorf("depth at %+v, want 8:10", cp.Depth.Pos)
	}
}

func TestParseFindingPositions(t *testing.T) {
	body := "intro\n\n```yaml\n" + strings.Replace(good, "remaining: 70", "remaining: 80", 1) + "```\n"
	r := Parse(body, Options{Issue: 7})
	if len(r.Findings) != 1 {
		t.Fatalf("findings: %v", r.Findings)
	}
	f := r.Findings[0]
	if f.Line != 11 || f.KeyPath != "checkpoint.budget.remaining" || !strings.Contains(f.Message, "30 = 70, found 80") {
		t.Fatalf("got %+v", f)
	}
	if col := strings.Index(strings.Split(body, "\n")[10], "80") + 1; f.Col != col {
		t.Errorf("col = %d, want %d", f.Col, col)
	}
}

func TestParseIssueNumber(t *testing.T) {
	r := Parse(good, Options{Issue: 8})
	if r.Valid() || len(r.Findings) != 1 || !strings.Contains(r.Findings[0].Message, "number 8, found 7") {
		t.Fatalf("got %v", r.Findings)
	}
}

func TestDidYouMean(t *testing.T) {
	r := Parse(strings.Replace(good, "next_agent:", "nextagent:", 1), Options{})
	var msgs []string
	for _, f := range r.Findings {
		msgs = append(msgs, f.Message)
	}
	all := strings.Join(msgs, "\n")
	if !strings.Contains(all, `unknown key "nextagent" (did you mean "next_agent"?)`) || !strings.Contains(all, `required key "next_agent" is missing`) {
		t.Fatalf("got:\n%s", all)
	}
}

// TestHostileInput feeds input that once broke YAML parsers: each must give
// a clear finding quickly and never panic.
func TestHostileInput(t *testing.T) {
	bomb := "checkpoint:\n  a: &a [x,x,x,x,x,x,x,x,x]\n"
	for i := 'b'; i <= 'k'; i++ {
		bomb += "  " + string(i) + ": &" + string(i) + " [" + strings.Repeat("*"+string(i-1)+",", 9) + "*" + string(i-1) + "]\n"
	}
	cases := map[string]string{
		"alias bomb":      bomb,
		"deep nesting":    "checkpoint:\n  phase: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n",
		"deep in budget":  "checkpoint:\n  x: " + strings.Repeat("{a: ", 5000) + "1" + strings.Repeat("}", 5000) + "\n",
		"binary":          "checkpoint:\n" + string([]byte{0, 1, 2, 0xff, 0xfe, 0x80, 0x7f}) + "\n",
		"10 MB of spaces": "```yaml\ncheckpoint:\n" + strings.Repeat(" ", 10<<20) + "\n```\n",
		"tabs":            "checkpoint:\n\tversion: 2\n",
		"many keys":       "checkpoint:\n" + strings.Repeat("  k: 1\n", 9000),
		"document stream": "checkpoint:\n  version: 2\n---\ncheckpoint:\n  version: 2\n",
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			r := Parse(body, Options{})
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
			if r.Valid() || len(r.Findings) == 0 {
				t.Fatalf("no finding for hostile input")
			}
			for _, f := range r.Findings {
				if f.Line < 1 || f.Col < 1 || f.Message == "" || f.Rule == "" {
					t.Errorf("finding without a place or message: %+v", f)
				}
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add(good)
	f.Add("```yaml\n" + good + "```\n")
	f.Add("~~~yml\ncheckpoint: [1, 2]\n~~~")
	f.Add("checkpoint:\n  history_tail: [{agent: a}]\n")
	f.Fuzz(func(t *testing.T, body string) {
		r := Parse(body, Options{MaxBytes: 4096})
		for _, x := range r.Findings {
			if x.Line < 0 || x.Col < 0 || x.Message == "" {
				t.Fatalf("bad finding %+v", x)
			}
		}
		if r.Valid() {
			b := r.Block()
			if out := b.Replace(b.Content()); Parse(out, Options{MaxBytes: 4096}).Valid() != true {
				t.Fatalf("rewriting a valid block with its own content made it invalid: %q", out)
			}
		}
	})
}

// An unknown key may hold anything; its key path stays one quoted line, so
// a finding is always one log line.
func TestKeyPathOfAnOddKeyIsOneLine(t *testing.T) {
	r := Parse(strings.Replace(good, "  phase: build\n", "  phase: build\n  \"a\\nb::set-env\": 1\n", 1), Options{})
	if len(r.Findings) != 1 {
		t.Fatalf("findings: %v", r.Findings)
	}
	if got, want := r.Findings[0].KeyPath, `checkpoint["a\nb::set-env"]`; got != want {
		t.Errorf("key path %q, want %q", got, want)
	}
}
