package checkpoint

import (
	"strings"
	"testing"
	"time"
)

const hintedCheckpoint = "checkpoint:\n  version: 2\n  issue: 7\n  current_task: |\n    # gns-guard: comments since 2001-01-01T00:00:00Z\n    keep this line\n"

var hintTime = time.Date(2026, 11, 27, 21, 4, 5, 0, time.UTC)

func TestHintRead(t *testing.T) {
	line := "# gns-guard: comments since 2026-11-27T21:04:05Z\n"
	tests := []struct {
		name string
		body string
		want time.Time // zero: no hint
	}{
		{"first line", "intro\n```yaml\n" + line + hintedCheckpoint + "```\nafter\n", hintTime},
		{"after a person's comment and a blank line", "```yaml\n# notes\n\n" + line + hintedCheckpoint + "```\n", hintTime},
		{"indented fence", "  ```yaml\n  " + line + "  checkpoint:\n    version: 2\n  ```\n", hintTime},
		{"crlf", "```yaml\r\n" + strings.TrimSuffix(line, "\n") + "\r\ncheckpoint:\r\n  version: 2\r\n```\r\n", hintTime},
		{"the earliest of several", "```yaml\n" + line + "# gns-guard: comments since 2026-11-27T20:00:00Z\n" + hintedCheckpoint + "```\n", time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC)},
		{"an offset is read in UTC, seconds only", "```yaml\n# gns-guard: comments since 2026-11-27T22:04:05.9+01:00\n" + hintedCheckpoint + "```\n", hintTime},
		{"inside a value is not a hint", "```yaml\n" + hintedCheckpoint + "```\n", time.Time{}},
		{"after the first key is not a hint", "```yaml\ncheckpoint:\n  " + line + "  version: 2\n```\n", time.Time{}},
		{"not a time", "```yaml\n# gns-guard: comments since yesterday\n" + hintedCheckpoint + "```\n", time.Time{}},
		{"a bare checkpoint carries none", line + hintedCheckpoint, time.Time{}},
		{"two checkpoint blocks", "```yaml\n" + line + hintedCheckpoint + "```\n```yaml\n" + line + hintedCheckpoint + "```\n", time.Time{}},
		{"no checkpoint", "```yaml\n" + line + "other: 1\n```\n", time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Hint(tt.body, 0)
			if ok != !tt.want.IsZero() || !got.Equal(tt.want) {
				t.Errorf("Hint = %v, %v; want %v", got, ok, tt.want)
			}
		})
	}
}

// WithHint writes exactly one hint, first in the block, and changes no
// byte outside the block (docs/contract.md §2) nor any value inside it.
func TestWithHint(t *testing.T) {
	later := hintTime.Add(time.Hour)
	tests := []struct {
		name, body string
		at         time.Time
		want       string // the block's content after
	}{
		{"added", "```yaml\n" + hintedCheckpoint + "```\n", hintTime, HintLine(hintTime) + "\n" + hintedCheckpoint},
		{"replaced", "```yaml\n" + HintLine(hintTime) + "\n" + hintedCheckpoint + "```\n", later, HintLine(later) + "\n" + hintedCheckpoint},
		{"duplicates collapse to one", "```yaml\n" + HintLine(hintTime) + "\n# mine\n" + HintLine(later) + "\n" + hintedCheckpoint + "```\n", later, HintLine(later) + "\n# mine\n" + hintedCheckpoint},
		{"zero removes it", "```yaml\n" + HintLine(hintTime) + "\n" + hintedCheckpoint + "```\n", time.Time{}, hintedCheckpoint},
		{"the block's indentation and line ends", "  ```yaml\r\n  checkpoint:\r\n    version: 2\r\n  ```\r\n", hintTime, "  " + HintLine(hintTime) + "\r\n  checkpoint:\r\n    version: 2\r\n"},
		{"an unclosed fence", "```yaml\n" + hintedCheckpoint, hintTime, HintLine(hintTime) + "\n" + hintedCheckpoint},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := "# Task\n\nsome text\n\n" + tt.body
			if strings.HasSuffix(tt.body, "```\n") || strings.HasSuffix(tt.body, "```\r\n") {
				body += "\ntrailing words\n"
			}
			out := WithHint(body, tt.at, 0)
			before, after := Find(body, 0)[0], Find(out, 0)[0]
			if out[:after.ContentStart] != body[:before.ContentStart] || out[after.ContentEnd:] != body[before.ContentEnd:] {
				t.Errorf("bytes outside the block changed:\n%q\n%q", body, out)
			}
			if got := after.Raw(); got != tt.want {
				t.Errorf("block = %q, want %q", got, tt.want)
			}
			if a, b := Parse(body, Options{}), Parse(out, Options{}); a.Checkpoint.CurrentTask.Value != b.Checkpoint.CurrentTask.Value || a.Checkpoint.Version.Value != b.Checkpoint.Version.Value {
				t.Errorf("the data changed: %q → %q", a.Checkpoint.CurrentTask.Value, b.Checkpoint.CurrentTask.Value)
			}
			if again := WithHint(out, tt.at, 0); again != out {
				t.Errorf("writing the same hint again changed the body:\n%q\n%q", out, again)
			}
		})
	}
	bare := HintLine(hintTime) + "\n" + hintedCheckpoint
	if got := WithHint(hintedCheckpoint, hintTime, 0); got != hintedCheckpoint {
		t.Errorf("a bare checkpoint gained a hint: %q", got)
	}
	if got := WithHint(bare, later, 0); got != bare {
		t.Errorf("a bare checkpoint's text was rewritten: %q", got)
	}
}

// A hint never puts a block over max-checkpoint-bytes: it is left out.
func TestWithHintStaysUnderTheCap(t *testing.T) {
	body := "```yaml\n" + HintLine(hintTime) + "\n" + hintedCheckpoint + "```\n"
	size := len(hintedCheckpoint)
	if got := WithHint(body, hintTime.Add(time.Hour), size+10); Find(got, 0)[0].Raw() != hintedCheckpoint {
		t.Errorf("a hint over the cap was written: %q", got)
	}
	if got := WithHint(body, hintTime.Add(time.Hour), size+len(HintLine(hintTime))+1); Find(got, 0)[0].Raw() != HintLine(hintTime.Add(time.Hour))+"\n"+hintedCheckpoint {
		t.Errorf("a hint that fits was left out: %q", got)
	}
}

// A rewrite of the checkpoint keeps the hint once, first in the block.
func TestKeepHintThroughARewrite(t *testing.T) {
	body := "```yaml\n" + HintLine(hintTime) + "\n# a person's note\n" + HintLine(hintTime.Add(time.Hour)) + "\n" + hintedCheckpoint + "```\n"
	r := Parse(body, Options{})
	text, err := r.Checkpoint.WithBudget(10, 2, 8).Encode()
	if err != nil {
		t.Fatal(err)
	}
	out := RewriteHint(body, r.Block().Replace(text), time.Time{}, 0)
	raw := Find(out, 0)[0].Raw()
	if strings.Count(raw, "gns-guard: comments since") != 2 || !strings.HasPrefix(raw, HintLine(hintTime)+"\n# a person's note\n") {
		t.Errorf("the rewrite did not keep one hint (and the task's own line):\n%s", raw)
	}
	if got, _ := Hint(out, 0); !got.Equal(hintTime) {
		t.Errorf("kept hint %v, want %v", got, hintTime)
	}
}

// The hint is not part of what an agent loads or the schema judges.
func TestHintIsNoKey(t *testing.T) {
	plain := "```yaml\n" + hintedCheckpoint + "```\n"
	hinted := WithHint(plain, hintTime, 0)
	if got := Find(hinted, 0)[0].Text(); got != hintedCheckpoint {
		t.Errorf("Text = %q, want the block without its hint", got)
	}
	a, b := Parse(plain, Options{Issue: 7}), Parse(hinted, Options{Issue: 7})
	if len(a.Findings) != len(b.Findings) {
		t.Errorf("the hint changed the findings: %v → %v", a.Findings, b.Findings)
	}
}
