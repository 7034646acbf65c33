package guard

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/receipt"
)

// reportedAt is when the result comment of these tests was posted.
var reportedAt = time.Date(2026, 5, 16, 13, 30, 0, 0, time.UTC)

// statementOf is the meter's signed statement of issue 9 with base and lines.
func statementOf(key receipt.Key, base int64, lines ...receipt.Spent) *MeterRead {
	st := key.SignStatement(receipt.Statement{Repo: "acme/app", Issue: 9, Seen: true, Base: base, Invocations: lines, Issued: reportedAt.Unix()})
	return &MeterRead{URL: "http://meter.test", Statement: &st}
}

// spent is a settled invocation whose last call started at last.
func spent(inv string, tokens int64, last time.Time) receipt.Spent {
	return receipt.Spent{Invocation: inv, Login: "dev", Calls: 2, Tokens: tokens, First: last.Add(-time.Minute).Unix(), Last: last.Unix()}
}

// meteredRun is the run on a result of invocation inv-5 (reporting 500,
// with its receipt) posted at reportedAt, on the checkpoint of body()
// (consumed 3,000, inv-3 last), with the meter's statement m.
func meteredRun(t *testing.T, metering string, m *MeterRead, edits ...string) *Plan {
	c := metered(t, 77, "inv-5", 500, receiptFor(9, "inv-5", 400))
	c.CreatedAt = reportedAt
	in := meteredInput(t, c, metering)
	in.Issue.Body = body(edits...)
	in.Meter = m
	return Decide(in)
}

// budget.consumed's rise since the meter first read the issue is at least
// what the invocations the checkpoint records spent through it, whichever
// invocation it names last: an agent that names a spent invocation (or a
// made-up one) without reporting its spend fails.
func TestTheMeteredTotalHoldsConsumed(t *testing.T) {
	early := reportedAt.Add(-time.Hour)
	for _, tt := range []struct {
		name  string
		m     *MeterRead
		edits []string
		fails bool
	}{
		{"the recorded spend within the rise", statementOf(meterKey, 2000, spent("inv-3", 1000, early), spent("inv-5", 400, early)), nil, false},
		{"the recorded spend past the rise", statementOf(meterKey, 2000, spent("inv-3", 1001, early), spent("inv-5", 400, early)), nil, true},
		{"a spent invocation named with nothing reported", statementOf(meterKey, 3000, spent("inv-3", 0, early), spent("ghost-1", 2500, early), spent("inv-5", 400, early)),
			[]string{"last_invocation: inv-3", "last_invocation: ghost-1"}, true},
		{"a saved receipt below what the invocation spent", statementOf(meterKey, 2400, spent("inv-3", 2610, early), spent("inv-5", 400, early)), nil, true},
		{"spend before the meter first read the issue", statementOf(meterKey, 2900, spent("inv-3", 100, early), spent("inv-5", 400, early)), nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := meteredRun(t, "off", tt.m, tt.edits...)
			var got []finding.Finding
			for _, f := range rulesOf(p, finding.Error, RuleUnderReported) {
				if f.KeyPath == "budget.consumed" {
					got = append(got, f)
				}
			}
			if (len(got) == 1) != tt.fails {
				t.Fatalf("findings %v", p.Findings())
			}
			if tt.fails && !strings.Contains(got[0].Message, "since the meter first read the issue") {
				t.Errorf("message %q", got[0].Message)
			}
		})
	}
}

// Spend of an invocation no result reports is in flight while it calls or
// while no result came after its last call; once results came after, it
// is a violation under metering: required and a warning otherwise.
func TestSpendNoResultReports(t *testing.T) {
	before, after := reportedAt.Add(-ClockSlack-time.Minute), reportedAt.Add(time.Minute)
	calling := spent("inv-4", 900, before)
	calling.InFlight = 1
	for _, tt := range []struct {
		name     string
		line     receipt.Spent
		metering string
		want     finding.Severity
	}{
		{"left behind, required", spent("inv-4", 900, before), "required", finding.Error},
		{"left behind, off", spent("inv-4", 900, before), "off", finding.Warning},
		{"working now", spent("inv-4", 900, after), "required", ""},
		{"working now, on a meter whose clock is 5 minutes behind", spent("inv-4", 900, reportedAt.Add(-5*time.Minute)), "required", ""},
		{"a call in flight", calling, "required", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := meteredRun(t, tt.metering, statementOf(meterKey, 2000, spent("inv-3", 1000, before), tt.line, spent("inv-5", 400, before)))
			var got []finding.Finding
			for _, f := range p.Findings() {
				if f.Rule == RuleUnmetered && strings.Contains(f.Message, `invocation "inv-4"`) {
					got = append(got, f)
				}
			}
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("spend in flight was judged: %v", got)
			case tt.want != "" && (len(got) != 1 || got[0].Severity != tt.want):
				t.Errorf("findings %v; want one %s", p.Findings(), tt.want)
			case tt.want != "" && !strings.Contains(got[0].Message, "gns-guard report --invocation"):
				t.Errorf("the finding does not say what to do: %q", got[0].Message)
			}
		})
	}
}

// Under metering: required a result whose invocation never called through
// the meter fails, even with a receipt (the meter signs an empty one).
func TestAResultTheMeterNeverSaw(t *testing.T) {
	early := reportedAt.Add(-time.Hour)
	p := meteredRun(t, "required", statementOf(meterKey, 2000, spent("inv-3", 1000, early)))
	got := rulesOf(p, finding.Error, RuleUnmetered)
	if len(got) != 1 || !strings.Contains(got[0].Message, `reports invocation "inv-5", which never called through the meter`) {
		t.Errorf("findings %v", p.Findings())
	}
	if p := meteredRun(t, "off", statementOf(meterKey, 2000, spent("inv-3", 1000, early))); len(p.Violations) != 0 {
		t.Errorf("with metering off: %v", ruleIDs(p))
	}
}

// A meter that cannot be read, or a statement that does not verify, is a
// warning that says the metered total was not judged: never a pass that
// says nothing.
func TestAMeterThatCannotBeRead(t *testing.T) {
	other, _ := receipt.NewKey([]byte(strings.Repeat("o", 40)))
	forged := statementOf(meterKey, 2000)
	forged.Statement.Base = 99999
	for _, tt := range []struct {
		name string
		m    *MeterRead
		says string
	}{
		{"down", &MeterRead{URL: "http://meter.test", Err: errors.New("could not reach the meter: connection refused")}, "connection refused"},
		{"another key", statementOf(other, 2000), "not meter-public-key's"},
		{"changed", forged, "does not verify"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := meteredRun(t, "off", tt.m)
			got := rulesOf(p, finding.Warning, RuleUnmetered)
			if len(got) != 1 || !strings.Contains(got[0].Message, "the meter at http://meter.test could not be read") || !strings.Contains(got[0].Message, tt.says) {
				t.Errorf("findings %v", p.Findings())
			}
		})
	}
}
