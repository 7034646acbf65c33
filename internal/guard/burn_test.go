package guard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// agentResult is a result comment of agent dev for invocation inv whose
// footer claims consumed tokens, padded with n words of output.
func agentResult(id int64, inv string, consumed int64, words int) issues.Comment {
	footer := fmt.Sprintf(`<!-- GNS_EVENT {"agent":"dev","invocation":%q,"event_type":"subagent_result","phase":"build","depth":1,"budget":{"before":7000,"consumed":%d,"remaining":%d},"status":"done","verdict":"pass","files_changed":1,"key_stats":{"tests":3},"next_agent":"reviewer"} -->`, inv, consumed, 7000-consumed)
	text := strings.Repeat("the limiter refills tokens at a steady rate ", words/8)
	return issues.Comment{ID: id, Author: "dev", HTMLURL: fmt.Sprintf("https://gitea.example/o/r/issues/9#issuecomment-%d", id),
		Body: "## 🔄 dev | phase:build | depth:1\n\n" + text + "\n\n" + footer}
}

func underReports(p *Plan) []finding.Finding {
	var out []finding.Finding
	for _, f := range p.Findings() {
		if f.Rule == RuleUnderReported {
			out = append(out, f)
		}
	}
	return out
}

// onComment is the run for comment c, posted before the checkpoint is
// patched: the footer's claim is all there is.
func onComment(t *testing.T, c issues.Comment) Input {
	in := input(t, body(), "cascade::depth-2")
	in.Event = issues.Event{Name: "issue_comment", Action: "created", Number: 9, Comment: &c}
	in.Recent = []issues.Comment{c}
	return in
}

func TestUnderReportFromTheFooter(t *testing.T) {
	c := agentResult(77, "inv-4", 50, 400)
	held := counter(t).Count(c.Body)
	p := Decide(onComment(t, c))
	fs := underReports(p)
	if len(fs) != 1 {
		t.Fatalf("findings %v", p.Findings())
	}
	f := fs[0]
	want := fmt.Sprintf(`comment #77 of agent "dev" holds %s tokens (cl100k_base), more than the 50 tokens its report added to budget.consumed (its footer's budget.consumed)`, tokens.Format(int64(held)))
	if f.Severity != finding.Warning || !strings.HasPrefix(f.Message, want) || f.KeyPath != "comment#77" {
		t.Errorf("finding %+v\nwant message %q", f, want)
	}
	if len(p.Violations) != 0 || !p.Resolved {
		t.Errorf("a warning failed the run: %v", ruleIDs(p))
	}
}

func TestHonestReportIsNotFlagged(t *testing.T) {
	c := agentResult(78, "inv-4", 5000, 400)
	if fs := underReports(Decide(onComment(t, c))); len(fs) != 0 {
		t.Errorf("an honest report was flagged: %v", fs)
	}
}

func TestUnderReportModes(t *testing.T) {
	c := agentResult(77, "inv-4", 50, 400)
	in := onComment(t, c)
	in.Config.UnderReport = "fail"
	p := Decide(in)
	if ids := ruleIDs(p); len(ids) != 1 || ids[0] != RuleUnderReported || p.Resolved || !p.Failed(in.Config) {
		t.Errorf("under-report: fail: violations %v", ids)
	}
	in.Config.UnderReport = "off"
	if fs := underReports(Decide(in)); len(fs) != 0 {
		t.Errorf("under-report: off still judged: %v", fs)
	}
}

// The footer claims plenty, but the checkpoint the agent patched rose by
// 100 over the guard's ledger: the ledger's figure counts, and the finding
// stays on later runs, from the ledger's burn series.
func TestUnderReportJudgesWhatTheBudgetWasCharged(t *testing.T) {
	in := input(t, body(), "cascade::depth-2")
	in.Config.LedgerKey = testKey
	l := firstLedger(t, in)
	withLedger(&in, l)
	c := agentResult(80, "inv-4", 6000, 400) // claims 6,000 in its footer
	in.Recent = append(in.Recent, c)
	in.Issue.Body = body("last_invocation: inv-3", "last_invocation: inv-4", "consumed: 3000", "consumed: 3100", "remaining: 7000", "remaining: 6900")
	p := Decide(in)
	fs := underReports(p)
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "more than the 100 tokens its report added to budget.consumed (the checkpoint over the guard's ledger: 3,000 → 3,100)") {
		t.Fatalf("findings %v", p.Findings())
	}
	// The next run: the ledger holds the report now.
	next := *p.Ledger
	next.Written = written.Unix()
	if n := len(next.Burn); n != 2 || next.Burn[1].Invocation != ledger.InvocationTag("inv-4") || next.Burn[1].Agent != "dev" || next.Burn[1].Consumed != 3100 {
		t.Fatalf("burn series %+v", next.Burn)
	}
	withLedger(&in, next)
	fs = underReports(Decide(in))
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "the guard's ledger: 3,000 → 3,100") {
		t.Errorf("the next run lost the finding: %v", fs)
	}
	// An honest patch of the same comment is not flagged.
	in2 := input(t, body(), "cascade::depth-2")
	in2.Config.LedgerKey = testKey
	withLedger(&in2, l)
	in2.Recent = append(in2.Recent, c)
	in2.Issue.Body = body("last_invocation: inv-3", "last_invocation: inv-4", "consumed: 3000", "consumed: 9000", "remaining: 7000", "remaining: 1000")
	if fs := underReports(Decide(in2)); len(fs) != 0 {
		t.Errorf("an honest patch was flagged: %v", fs)
	}
}

func TestBurnSeriesIsCappedAndStable(t *testing.T) {
	in := input(t, body(), "cascade::depth-2")
	in.Config.LedgerKey = testKey
	l := firstLedger(t, in)
	in.Issue.Body = body()
	for i := range 30 {
		in.Recent = nil
		withLedger(&in, l)
		c := 3000 + int64(i+1)*10
		in.Issue.Body = body("last_invocation: inv-3", fmt.Sprintf("last_invocation: inv-%d", i+10), "consumed: 3000", fmt.Sprintf("consumed: %d", c), "remaining: 7000", fmt.Sprintf("remaining: %d", 10000-c))
		p := Decide(in)
		if p.Ledger == nil || len(p.Violations) != 0 {
			t.Fatalf("step %d: %v %+v %d", i, ruleIDs(p), p.Numbers, len(ledger.Encode(l, testKey)))
		}
		l = *p.Ledger
		l.Written = written.Unix()
	}
	if len(l.Burn) != ledger.MaxBurnPoints || l.Burn[len(l.Burn)-1].N != 31 || l.Burn[len(l.Burn)-1].Consumed != 3300 {
		t.Fatalf("burn: %d points, last %+v", len(l.Burn), l.Burn[len(l.Burn)-1])
	}
	// The series is part of a comment agents load: it stays cheap.
	bare := l
	bare.Burn = nil
	if cost := counter(t).Count(ledger.Encode(l, testKey)) - counter(t).Count(ledger.Encode(bare, testKey)); cost > 30*ledger.MaxBurnPoints {
		t.Errorf("a full burn series costs %d tokens", cost)
	}
	in.Recent = nil
	withLedger(&in, l)
	again := Decide(in) // the same state decided again adds nothing
	if len(again.Ledger.Burn) != ledger.MaxBurnPoints || again.Ledger.Burn[len(again.Ledger.Burn)-1].N != 31 {
		t.Errorf("deciding the same state again moved the series: %+v", again.Ledger.Burn[len(again.Ledger.Burn)-1])
	}
}

// The issue's lifetime spend outlives the budget prune: the phase that
// ends is counted in the ledger's earlier phases, the next phase starts
// at 0, and the burn series calls only that reset a new budget.
func TestLifetimeSpendAcrossPhases(t *testing.T) {
	in := input(t, body(), "cascade::depth-2")
	in.Config.LedgerKey = testKey
	l := firstLedger(t, in)
	if l.Earlier != 0 {
		t.Fatalf("a first ledger counts %d tokens of earlier phases", l.Earlier)
	}
	// An agent spends past prune-threshold: the run prunes into a new phase.
	withLedger(&in, l)
	in.Issue.Body = body("last_invocation: inv-3", "last_invocation: inv-4", "consumed: 3000", "consumed: 8500", "remaining: 7000", "remaining: 1500")
	p := Decide(in)
	if p.Prune == nil || p.Ledger == nil || p.Ledger.Consumed != 0 {
		t.Fatalf("no prune into a new phase: %v %+v", ruleIDs(p), p.Ledger)
	}
	if n := p.Numbers; n.BudgetConsumed != 8500 || n.EarlierPhases != 0 || n.Lifetime != 8500 {
		t.Errorf("the pruning run's figures: %+v", n)
	}
	if p.Ledger.Earlier != 8500 {
		t.Errorf("the new phase's ledger counts %d tokens of earlier phases, want 8,500", p.Ledger.Earlier)
	}
	burn := p.Ledger.Burn
	if last := burn[len(burn)-1]; last.Agent != "" || last.Consumed != 0 || last.Remaining != 750 {
		t.Errorf("the series does not end with the new budget: %+v", burn)
	}
	// The next runs: the new phase's consumed adds to the earlier phases.
	l = *p.Ledger
	l.Written = written.Unix()
	in.Recent = nil
	withLedger(&in, l)
	in.Issue.Body = p.Prune.Body
	if n := Decide(in).Numbers; n.BudgetConsumed != 0 || n.EarlierPhases != 8500 || n.Lifetime != 8500 {
		t.Errorf("after the prune: %+v", n)
	}
	in.Issue.Body = strings.Replace(strings.Replace(p.Prune.Body, "consumed: 0", "consumed: 300", 1), "remaining: 750", "remaining: 450", 1)
	q := Decide(in)
	if n := q.Numbers; n.BudgetConsumed != 300 || n.EarlierPhases != 8500 || n.Lifetime != 8800 || q.Ledger.Earlier != 8500 {
		t.Errorf("a report in the new phase: %+v, ledger's earlier phases %d", n, q.Ledger.Earlier)
	}
	// A record written before the ledger kept the figure: its series shows
	// where a phase ended.
	old := l
	old.Earlier = 0
	if got := old.EarlierPhases(); got != 8500 {
		t.Errorf("earlier phases read from the series: %d, want 8,500", got)
	}
}
