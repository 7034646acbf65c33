package status

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// floodBody is a checkpoint with thousands of unknown keys, within
// max-checkpoint-bytes: every one is a finding.
func floodBody(keys int) string {
	var b strings.Builder
	for i := range keys {
		fmt.Fprintf(&b, "  k%05d: x\n", i)
	}
	return body("  next_agent: reviewer\n", "  next_agent: reviewer\n"+b.String())
}

func TestFindingsFloodStaysBounded(t *testing.T) {
	in := input(t, floodBody(5000), "cascade::depth-2")
	p := guard.Decide(in)
	if len(p.Violations) < 5000 {
		t.Fatalf("%d violations, want one per unknown key", len(p.Violations))
	}
	status := Stable(in, p, nil, Applied{Record: ledger.Encode(ledger.Record{Issue: 9}, nil)})
	if n := utf8.RuneCountInString(status); n > MaxCommentChars {
		t.Errorf("status comment of %d characters, over %d", n, MaxCommentChars)
	}
	if rows := strings.Count(status, "\n| ❌ |"); rows != guard.MaxTableRows {
		t.Errorf("%d finding rows, want %d", rows, guard.MaxTableRows)
	}
	if !strings.Contains(status, fmt.Sprintf("… and %d more finding(s)", len(p.Findings())-guard.MaxTableRows)) || !strings.HasSuffix(status, "sig=unsigned -->\n") {
		t.Errorf("the status comment does not say how many more, or lost its record:\n%s", status[len(status)-600:])
	}
	if n := utf8.RuneCountInString(p.Recovery); n > MaxCommentChars || strings.Count(p.Recovery, "\n| ") > guard.MaxTableRows+2 {
		t.Errorf("recovery comment of %d characters and %d rows", n, strings.Count(p.Recovery, "\n| "))
	}
	if sum := Summary(9, p, in.Config, nil); strings.Count(sum, "\n| ❌ |") != guard.MaxTableRows {
		t.Errorf("the summary lists %d findings", strings.Count(sum, "\n| ❌ |"))
	}
}

func TestCapCommentKeepsTheRecord(t *testing.T) {
	text := strings.Repeat("a line of text\n", 10000)
	got := capComment(text, "<!-- record -->")
	if utf8.RuneCountInString(got) > MaxCommentChars || !strings.HasSuffix(got, "<!-- record -->\n") || !strings.Contains(got, "cut to stay within") {
		t.Errorf("capComment: %d characters, ends %q", utf8.RuneCountInString(got), got[len(got)-80:])
	}
	if short := capComment("short\n", "<!-- r -->"); short != "short\n<!-- r -->\n" {
		t.Errorf("a short comment changed: %q", short)
	}
}
