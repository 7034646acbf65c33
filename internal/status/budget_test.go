package status

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// An under-reported agent comment is linked from the status comment.
func TestStatusLinksAnUnderReportedComment(t *testing.T) {
	c := agentResult(77, "inv-4", 50, 400)
	p := guard.Decide(onComment(t, c))
	status := Render(9, p, config.Default(), nil, "")
	if !strings.Contains(status, "[comment 77](https://gitea.example/o/r/issues/9#issuecomment-77)") || !strings.Contains(status, "consumption-under-reported") {
		t.Errorf("the status comment does not link the comment:\n%s", status)
	}
}

// The ledger's burn series (30 accepted steps, capped) is charted in the
// status comment and the summary.
func TestBurnChartInStatusAndSummary(t *testing.T) {
	in := input(t, body(), "cascade::depth-2")
	in.Config.LedgerKey = testKey
	l := firstLedger(t, in)
	for i := range 30 {
		in.Recent = nil
		withLedger(&in, l)
		c := 3000 + int64(i+1)*10
		in.Issue.Body = body("last_invocation: inv-3", fmt.Sprintf("last_invocation: inv-%d", i+10), "consumed: 3000", fmt.Sprintf("consumed: %d", c), "remaining: 7000", fmt.Sprintf("remaining: %d", 10000-c))
		p := guard.Decide(in)
		if p.Ledger == nil || len(p.Violations) != 0 {
			t.Fatalf("step %d: %v %+v", i, ruleIDs(p), p.Numbers)
		}
		l = *p.Ledger
		l.Written = written.Unix()
	}
	if len(l.Burn) != ledger.MaxBurnPoints {
		t.Fatalf("burn: %d points", len(l.Burn))
	}
	in.Recent = nil
	withLedger(&in, l)
	again := guard.Decide(in)
	status := Render(9, again, in.Config, nil, "")
	if !strings.Contains(status, "```mermaid\n") || !strings.Contains(status, "| Agent | Steps | Tokens | Share |") {
		t.Errorf("no burn chart in the status comment:\n%s", status)
	}
	if !strings.Contains(Summary(9, again, in.Config, nil), "xychart-beta") {
		t.Error("no burn chart in the summary")
	}
}

// A comment too large to read is reported in the status comment.
func TestStatusReportsContentTooLarge(t *testing.T) {
	in := input(t, body(), "cascade::depth-2")
	in.Recent = []issues.Comment{
		{ID: 11, Author: "ann", Body: "fine"},
		{ID: 12, Author: "mallory", TooLarge: true, BodyBytes: 8 << 20, HTMLURL: "http://h/o/r/issues/9#issuecomment-12"},
		{ID: 13, Author: "bob", Body: "also fine"},
	}
	p := guard.Decide(in)
	if st := Stable(in, p, nil, Applied{Written: written}); !strings.Contains(st, "content-too-large") || !strings.Contains(st, "comment 12") {
		t.Errorf("the status comment does not report it:\n%s", st)
	}
}

func TestBudgetWarnings(t *testing.T) {
	cases := []struct {
		consumed int64
		want     string
	}{
		{5900, ""},
		{6000, "60% of the budget is used"},
		{7900, "60% of the budget is used"},
		{8000, "80% of the budget is used"},
	}
	for _, tc := range cases {
		b := body("consumed: 3000", fmt.Sprintf("consumed: %d", tc.consumed), "remaining: 7000", fmt.Sprintf("remaining: %d", 10000-tc.consumed), "next_estimated_tokens: 1500", "next_estimated_tokens: 500")
		in := input(t, b, "cascade::depth-2")
		p := guard.Decide(in)
		for name, text := range map[string]string{"status": Render(9, p, in.Config, nil, ""), "summary": Summary(9, p, in.Config, nil)} {
			got := ""
			for _, w := range []string{"60% of the budget is used", "80% of the budget is used"} {
				if strings.Contains(text, w) {
					got = w
				}
			}
			if got != tc.want {
				t.Errorf("consumed %d, %s: warning %q, want %q\n%s", tc.consumed, name, got, tc.want, text)
			}
		}
	}
}

func TestExhaustedBudgetWaitsForAPerson(t *testing.T) {
	in := input(t, body(), "cascade::depth-2", "budget::exhausted")
	p := guard.Decide(in)
	status := Render(9, p, in.Config, nil, "")
	if !strings.Contains(status, "## ⏸️ gns-guard: waiting for a person") || strings.Contains(status, "❌ gns-guard") || strings.Contains(status, "% of the budget is used") {
		t.Errorf("an exhausted budget does not read as waiting:\n%s", status)
	}
	if !strings.Contains(Summary(9, p, in.Config, nil), "is waiting for a person") {
		t.Error("the summary does not say the issue waits for a person")
	}
	// With another violation too, the comment fails and says it waits.
	in = input(t, body("depth: 1", "depth: 3"), "cascade::depth-2", "budget::exhausted")
	status = Render(9, guard.Decide(in), in.Config, nil, "")
	if !strings.Contains(status, "❌ gns-guard: 2 violation(s)") || !strings.Contains(status, "**Waiting for a person**") {
		t.Errorf("a mixed failure:\n%s", status)
	}
}
