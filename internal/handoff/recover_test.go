package handoff

import (
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
)

// chain is three reports on the golden issue, as their comments say.
func chain(t *testing.T) []Event {
	t.Helper()
	body := issueBody(t)
	labels := live
	var evs []Event
	for i, r := range []Report{
		{Agent: "code-reviewer", Invocation: "inv-8", Action: "reviewed", Consumed: 1200, Status: "ok", NextAgent: "lead-developer", NextEstimate: 3000},
		{Agent: "lead-developer", Invocation: "inv-9", Action: "fixed the refill rate", Consumed: 2000, Status: "ok", NextAgent: "code-reviewer", NextEstimate: 2500},
		{Agent: "code-reviewer", Invocation: "inv-10", Action: "approved", Consumed: 800, Status: "ok", NextAgent: "", NextEstimate: 0, Phase: "done"},
	} {
		r.Now = now.Add(time.Duration(i) * time.Minute)
		out, err := Apply(42, body, labels, r, Options{HistoryTail: 3})
		if err != nil {
			t.Fatal(err)
		}
		ft, ok := ParseFooter(Comment(r, out))
		if !ok {
			t.Fatal("footer not read back")
		}
		evs = append(evs, Event{CommentID: int64(100 + i), Author: "agent-bot", Created: r.Now, Footer: ft})
		body = out.Body
	}
	return evs
}

// TestReconstruct: the ledger accounts for the first report (its footer's
// remaining is the ledger's); the two since are added; every field says
// where it came from; the proposal is a valid checkpoint.
func TestReconstruct(t *testing.T) {
	evs := chain(t)
	base := Baseline{Source: "the guard's ledger in its status comment 5", Version: 2, Issue: 42, Phase: "implementation",
		Total: 20000, Consumed: 7400, Remaining: 12600, Written: now.Add(90 * time.Second)}
	broken := checkpoint.Parse(strings.Replace(issueBody(t), "remaining: 13800", "remaining: oops", 1), checkpoint.Options{Issue: 42})
	p, err := Reconstruct(RecoverInput{Issue: 42, Baseline: base, Events: evs, Broken: broken.Checkpoint,
		Labels: []string{"size::medium", "cascade::depth-2"}, TailLimit: 3, Created: now})
	if err != nil {
		t.Fatal(err)
	}
	r := checkpoint.Parse("```yaml\n"+p.YAML+"```\n", checkpoint.Options{Issue: 42})
	if !r.Valid() {
		t.Fatalf("%v\n%s", r.Findings, p.YAML)
	}
	cp := r.Checkpoint
	if cp.Budget.Consumed.Value != 7400+2000+800 || cp.Budget.Remaining.Value != 20000-10200 || cp.Phase.Value != "done" ||
		cp.LastInvocation.Value != "inv-10" || cp.NextAgent.Value != "" || cp.CreatedAt.Value != "2026-05-16T12:50:00Z" ||
		cp.CurrentTask.Value != "wire the limiter into the gateway config" || len(cp.HistoryTail.Items) != 6 {
		t.Errorf("proposal:\n%s", p.YAML)
	}
	// Nothing is archived: the body's three entries and the three reports'
	// are all kept, and the guard archives the overflow on its next run.
	if len(p.Since) != 2 || p.Since[0] != 101 || len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "the guard archives the oldest 3") {
		t.Errorf("since %v, notes %v", p.Since, p.Notes)
	}
	for _, f := range p.Fields {
		if f.Source == "" {
			t.Errorf("field %s has no source", f.Key)
		}
		if f.Key == "budget.consumed" && !strings.Contains(f.Source, "2000 (comment 101) + 800 (comment 102)") {
			t.Errorf("budget.consumed source %q", f.Source)
		}
	}

	// A gap in the chain is a note; with no footer matching the ledger,
	// the comments after its time count.
	base.Remaining, base.Consumed = 12000, 8000
	p, err = Reconstruct(RecoverInput{Issue: 42, Baseline: base, Events: evs, TailLimit: 3, Created: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Since) != 1 || p.Since[0] != 102 || len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "comment 102") {
		t.Errorf("since %v notes %v", p.Since, p.Notes)
	}
}
