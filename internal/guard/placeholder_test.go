package guard

import (
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/issues"
)

// An issue opened from the template holds issue: 0. The guard's first run
// passes, plans one compare-and-swap write that sets the number (and no
// other byte), and accepts the state with the number set, one content
// version on.
func TestPlaceholderIssueIsSetOnTheFirstRun(t *testing.T) {
	in := input(t, body("issue: 9", "issue: 0"), "cascade::depth-2")
	in.Event = issues.Event{Name: "issues", Action: "opened", Number: 9, Sender: "alice"}
	in.Issue.ContentVersion = 0
	p := Decide(in)
	if len(p.Violations) != 0 || !p.Resolved {
		t.Fatalf("the placeholder failed the run: %v", ruleIDs(p))
	}
	if p.Fill == nil || p.Fill.Number != 9 || p.Fill.Body != body() {
		t.Fatalf("fill %+v, want the body with issue: 9 and nothing else changed", p.Fill)
	}
	ws := p.Writes()
	if len(ws) != 1 || ws[0].Kind != SetIssue || !strings.Contains(ws[0].Planned(), "from the template's placeholder 0 to 9") {
		t.Fatalf("writes %+v", ws)
	}
	if l := p.Ledger; l == nil || !l.Baseline || l.CheckpointIssue != 9 || l.ContentVersion != 1 || p.Opened != 1 {
		t.Fatalf("ledger %+v, opened %d: want the state accepted with issue 9 at content version 1, the guard's own fill no edit", p.Ledger, p.Opened)
	}
	if !strings.Contains(p.Fill.Note(), "placeholder `issue: 0`") || !strings.Contains(p.Fill.Note(), "9") {
		t.Errorf("the status comment's note: %q", p.Fill.Note())
	}

	// The next run, on the body the guard wrote, finds nothing to do.
	in.Config.LedgerKey = testKey
	after := in.After(Change{Body: &p.Fill.Body})
	withLedger(&after, *p.Ledger)
	next := Decide(after)
	if next.Fill != nil || len(next.Writes()) != 0 || len(next.Violations) != 0 {
		t.Errorf("after the fill: fill %+v, writes %v, violations %v", next.Fill, next.Writes(), ruleIDs(next))
	}
}

// Only the literal 0 is the placeholder: any other wrong number stays a
// violation, and so does a zero written otherwise.
func TestOnlyZeroIsThePlaceholder(t *testing.T) {
	for _, v := range []string{"issue: 5", "issue: 00", "issue: 0x0"} {
		p := Decide(input(t, body("issue: 9", v), "cascade::depth-2"))
		if p.Fill != nil || !slices.Contains(ruleIDs(p), checkpoint.RuleInvalid) {
			t.Errorf("%s: fill %+v, violations %v; want checkpoint-invalid and no fill", v, p.Fill, ruleIDs(p))
		}
	}
}

// Once the ledger accepted a number, 0 is a changed number: tampering, and
// the body is not rewritten.
func TestPlaceholderAfterTheLedgerIsTampering(t *testing.T) {
	in := trusted(t, 5, "issue: 9", "issue: 0")
	p := Decide(in)
	if p.Fill != nil || len(p.Writes()) > 0 && p.Writes()[0].Kind == SetIssue {
		t.Fatalf("the guard set a number the ledger had accepted already: %+v", p.Fill)
	}
	if msg := tamperMessage(t, p); !strings.Contains(msg, "issue 9 → 0") {
		t.Errorf("tamper message %q", msg)
	}
	if !slices.Contains(ruleIDs(p), checkpoint.RuleInvalid) {
		t.Errorf("violations %v, want checkpoint-invalid too", ruleIDs(p))
	}
}

// A template body that is broken elsewhere is judged with the number set
// (its only errors are the person's) but not rewritten: the number is set
// once it is valid.
func TestPlaceholderInAnInvalidBodyIsNotWritten(t *testing.T) {
	p := Decide(input(t, body("issue: 9", "issue: 0", "phase: build", "phase: \"\""), "cascade::depth-2"))
	if p.Fill != nil {
		t.Fatalf("an invalid body was rewritten: %+v", p.Fill)
	}
	for _, v := range p.Violations {
		if v.KeyPath == "checkpoint.issue" {
			t.Errorf("the placeholder is reported: %s", v.Message)
		}
	}
	if !slices.Contains(ruleIDs(p), checkpoint.RuleInvalid) {
		t.Errorf("violations %v, want the phase's checkpoint-invalid", ruleIDs(p))
	}
}

// Offline, without the issue's number, the placeholder is no error and the
// plan says the guard sets it.
func TestPlaceholderOffline(t *testing.T) {
	in := input(t, body("issue: 9", "issue: 0"), "cascade::depth-2")
	in.Issue.Number = 0
	p := Decide(in)
	if len(p.Violations) != 0 || p.Fill == nil || p.Fill.Number != 0 {
		t.Fatalf("violations %v, fill %+v", ruleIDs(p), p.Fill)
	}
	if ws := p.Writes(); len(ws) != 1 || !strings.Contains(ws[0].Planned(), "on the guard's first run") {
		t.Errorf("writes %+v", ws)
	}
}
