package guard

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/receipt"
)

var meterKey, _ = receipt.NewKey([]byte(strings.Repeat("m", 40)))

// metered is agentResult with a receipt in its footer.
func metered(t *testing.T, id int64, inv string, consumed int64, rc *receipt.Receipt) issues.Comment {
	t.Helper()
	c := agentResult(id, inv, consumed, 40)
	if rc != nil {
		data, err := json.Marshal(rc)
		if err != nil {
			t.Fatal(err)
		}
		c.Body = strings.Replace(c.Body, `"next_agent":"reviewer"}`, `"next_agent":"reviewer","metered":`+string(data)+`}`, 1)
	}
	return c
}

func receiptFor(issue int64, inv string, tokens int64) *receipt.Receipt {
	r := meterKey.Sign(receipt.Receipt{Repo: "acme/app", Issue: issue, Invocation: inv, Login: "dev", Calls: 3, Tokens: tokens, Input: tokens - 100, Output: 100})
	return &r
}

func meteredInput(t *testing.T, c issues.Comment, metering string) Input {
	in := onComment(t, c)
	in.Repo = "acme/app"
	in.Config.MeterPublicKey = meterKey.Public()
	in.Config.Metering = metering
	return in
}

func rulesOf(p *Plan, sev finding.Severity, rule string) []finding.Finding {
	var out []finding.Finding
	for _, f := range p.Findings() {
		if f.Rule == rule && f.Severity == sev {
			out = append(out, f)
		}
	}
	return out
}

// A report below its receipt fails the run, whatever under-report says;
// at or above it passes.
func TestReportBelowItsReceiptFails(t *testing.T) {
	n := int64(9)
	for _, tt := range []struct {
		consumed int64
		fails    bool
	}{{4999, true}, {5000, false}, {6000, false}} {
		in := meteredInput(t, metered(t, 77, "inv-4", tt.consumed, receiptFor(n, "inv-4", 5000)), "off")
		in.Config.UnderReport = "off"
		p := Decide(in)
		got := rulesOf(p, finding.Error, RuleUnderReported)
		if (len(got) == 1) != tt.fails {
			t.Fatalf("consumed %d against a receipt of 5,000: violations %v", tt.consumed, p.Findings())
		}
		if tt.fails && !strings.Contains(got[0].Message, "less than the 5,000 tokens the meter counted for invocation \"inv-4\" in 3 calls") {
			t.Errorf("message %q", got[0].Message)
		}
	}
}

// A receipt that does not verify, or is about another issue or
// invocation, does not count: under metering: required the result is
// unmetered; otherwise a warning says it was ignored, and it never lowers
// what the agent must report.
func TestReceiptsThatDoNotCount(t *testing.T) {
	forged := receiptFor(9, "inv-4", 5000)
	forged.Tokens = 10
	other, _ := receipt.NewKey([]byte(strings.Repeat("x", 40)))
	byOther := other.Sign(receipt.Receipt{Repo: "acme/app", Issue: 9, Invocation: "inv-4", Tokens: 10})
	for _, tt := range []struct {
		name string
		rc   *receipt.Receipt
		says string
	}{
		{"none", nil, "its footer carries no meter receipt"},
		{"forged total", forged, "does not verify"},
		{"another issue", receiptFor(8, "inv-4", 10), "issue #8, not #9"},
		{"another invocation", receiptFor(9, "inv-3", 10), `invocation "inv-3", not "inv-4"`},
		{"another key", &byOther, "not meter-public-key's"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := Decide(meteredInput(t, metered(t, 77, "inv-4", 5000, tt.rc), "required"))
			got := rulesOf(p, finding.Error, RuleUnmetered)
			if len(got) != 1 || !strings.Contains(got[0].Message, tt.says) || !p.Failed(config.Default()) {
				t.Fatalf("metering: required: findings %v; want a %s violation saying %q", p.Findings(), RuleUnmetered, tt.says)
			}
			p = Decide(meteredInput(t, metered(t, 77, "inv-4", 5000, tt.rc), "off"))
			warned := rulesOf(p, finding.Warning, RuleUnmetered)
			if len(p.Violations) != 0 || (tt.rc == nil) != (len(warned) == 0) {
				t.Errorf("metering: off: violations %v, warnings %v", ruleIDs(p), warned)
			}
		})
	}
	p := Decide(meteredInput(t, metered(t, 77, "inv-4", 5000, receiptFor(9, "inv-4", 5000)), "required"))
	if len(p.Violations) != 0 {
		t.Errorf("a valid receipt at the reported total: violations %v", ruleIDs(p))
	}
}

// metering: required holds the results reported from the change on: one
// the trusted record accepted before passes, the same one edited since
// and one the record does not hold fail.
func TestMeteringRequiredFromTheChangeOn(t *testing.T) {
	old := metered(t, 50, "inv-old", 900, nil)
	in := meteredInput(t, old, "required")
	if len(rulesOf(Decide(in), finding.Error, RuleUnmetered)) != 1 {
		t.Fatal("a result no record accepted passes without a receipt")
	}
	l := ledger.Record{Issue: 9, Writer: in.Self, Pending: []string{}, Results: []ledger.ResultRef{{ID: 50, Agent: "dev", Digest: ledger.ResultDigest(old.Body)}}}
	in.Status = &issues.Comment{ID: 40, Author: in.Self, Body: issues.StatusMarker(9) + "\n" + ledger.Encode(l, nil) + "\n"}
	if fs := rulesOf(Decide(in), finding.Error, RuleUnmetered); len(fs) != 0 {
		t.Errorf("a result the record accepted before metering was required fails: %v", fs)
	}
	edited := old
	edited.Body = strings.Replace(old.Body, "inv-old", "inv-edited", 1)
	in.Recent, in.Event.Comment = []issues.Comment{edited}, &edited
	if len(rulesOf(Decide(in), finding.Error, RuleUnmetered)) != 1 {
		t.Error("an accepted result edited since passes without a receipt")
	}
}
