package guard

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// written is when the test ledgers were written (server time).
var written = time.Date(2026, 5, 16, 13, 0, 0, 0, time.UTC)

var testKey = []byte("a ledger key only the guard's workflow can read")

// accepted is the ledger of body() as the guard accepted it at content
// version 4.
func accepted() ledger.Record {
	return ledger.Record{Issue: 9, Baseline: true, Version: 2, CheckpointIssue: 9, Phase: "build",
		Total: 10000, Consumed: 3000, Remaining: 7000, ContentVersion: 4, Pending: []string{},
		DepthLimit: "2", Written: written.Unix()}
}

// withLedger gives the input the guard's status comment carrying l, signed
// with the input's key, untouched since the guard wrote it.
func withLedger(in *Input, l ledger.Record) {
	in.Status = &issues.Comment{ID: 50, Author: issues.ActionsUser, UpdatedAt: time.Unix(l.Written, 0),
		Body: issues.StatusMarker(in.Issue.Number) + "\n## ✅ gns-guard: all clear\n" + ledger.Encode(l, in.Config.LedgerKey) + "\n"}
	in.Recent = append(in.Recent, *in.Status)
}

// trusted is an input whose checkpoint is edit, at content version cv,
// judged against the accepted ledger.
func trusted(t *testing.T, cv int, edits ...string) Input {
	in := input(t, body(edits...), "cascade::depth-2")
	in.Config.LedgerKey = testKey
	in.Issue.ContentVersion = cv
	withLedger(&in, accepted())
	return in
}

func tamperMessage(t *testing.T, p *Plan) string {
	t.Helper()
	for _, v := range p.Violations {
		if v.Rule == RuleTampered {
			if v.Label != "permission::violation" {
				t.Errorf("a tamper finding must set permission::violation, sets %q", v.Label)
			}
			return v.Message
		}
	}
	t.Fatalf("no %s finding: %v", RuleTampered, ruleIDs(p))
	return ""
}

func TestTamperAgainstTheLedger(t *testing.T) {
	cases := []struct {
		name  string
		cv    int
		edits []string
		want  []string
	}{
		{"consumed lowered", 5, []string{"consumed: 3000", "consumed: 1000", "remaining: 7000", "remaining: 9000"},
			[]string{"budget.consumed went down 3000 → 1000", "budget.remaining went up 7000 → 9000", "in one edit (content version 4 → 5)"}},
		{"total raised", 5, []string{"total: 10000", "total: 20000", "remaining: 7000", "remaining: 17000"}, []string{"budget.total went up 10000 → 20000"}},
		{"version changed", 5, []string{"version: 2", "version: 3"}, nil},
		{"issue changed", 5, []string{"issue: 9", "issue: 8"}, nil},
		{"two edits since", 6, []string{"total: 10000", "total: 20000", "remaining: 7000", "remaining: 17000"}, []string{"in 2 edits (content version 4 → 6)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := trusted(t, c.cv, c.edits...)
			p := Decide(in)
			msg := tamperMessage(t, p)
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q: %s", w, msg)
				}
			}
			if a, l := accepted(), p.Ledger; l.Total != a.Total || l.Consumed != a.Consumed || l.Remaining != a.Remaining || l.Version != a.Version || l.ContentVersion != a.ContentVersion {
				t.Errorf("a tampered state became the baseline: %+v", p.Ledger)
			}
			if p.Prune != nil {
				t.Error("a tampered body must never be rewritten")
			}
		})
	}
}

func TestTamperSeenOnALaterEvent(t *testing.T) {
	// The edit's run was replaced: the next event is a comment.
	in := trusted(t, 5, "consumed: 3000", "consumed: 1000", "remaining: 7000", "remaining: 9000")
	in.Event = issues.Event{Name: "issue_comment", Action: "created", Number: 9, Sender: "bob"}
	msg := tamperMessage(t, Decide(in))
	if !strings.Contains(msg, "in one edit (content version 4 → 5)") {
		t.Errorf("message: %s", msg)
	}
	// Progress the guard accepted, then consumption hidden below it.
	in = trusted(t, 5, "consumed: 3000", "consumed: 6000", "remaining: 7000", "remaining: 4000")
	p := Decide(in)
	if len(p.Violations) != 0 || p.Ledger.Consumed != 6000 || p.Ledger.ContentVersion != 5 {
		t.Fatalf("progress: %v, ledger %+v", ruleIDs(p), p.Ledger)
	}
	withLedger(&in, *p.Ledger)
	in.Issue.Body = body("consumed: 3000", "consumed: 4000", "remaining: 7000", "remaining: 6000")
	in.Issue.ContentVersion = 6
	if msg := tamperMessage(t, Decide(in)); !strings.Contains(msg, "went down 6000 → 4000") {
		t.Errorf("message: %s", msg)
	}
}

// An approver's own edit is not taken on the event's word (any writer can
// re-run an old run of the approver's): it fails like any other, and the
// approver accepts it by removing permission::violation, which the
// timeline shows.
func TestApproverEditNeedsTheApprovalLabel(t *testing.T) {
	in := trusted(t, 5, "total: 10000", "total: 20000", "remaining: 7000", "remaining: 17000")
	in.Config.BudgetAdmins = []string{"alice"}
	in.Event = issues.Event{Name: "issues", Action: "edited", Number: 9, Sender: "alice"}
	p := Decide(in)
	if !slices.Contains(ruleIDs(p), RuleTampered) || !slices.Contains(p.AddLabels, "permission::violation") || p.Ledger.Total != 10000 {
		t.Fatalf("an approver's raise on its own word: %v add %v ledger %+v", ruleIDs(p), p.AddLabels, p.Ledger)
	}
	// The approver removes the label: the timeline shows it, after the
	// ledger the failed run wrote.
	l := *p.Ledger
	l.Written = written.Add(time.Minute).Unix()
	withLedger(&in, l)
	in.LabelEvents = []issues.LabelEvent{{Label: "permission::violation", LabelID: 7, Added: false, Actor: "alice", At: written.Add(2 * time.Minute)}}
	in.Event = issues.Event{Name: "issues", Action: "unlabeled", Number: 9}
	if p := Decide(in); len(p.Violations) != 0 || p.Ledger.Total != 20000 {
		t.Errorf("approved: %v ledger %+v", ruleIDs(p), p.Ledger)
	}
}

func TestLegalCarryover(t *testing.T) {
	// floor(7000 × 0.5) + 0 = 3500.
	ok := trusted(t, 5, "total: 10000", "total: 3500", "consumed: 3000", "consumed: 0", "remaining: 7000", "remaining: 3500", "phase: build", "phase: test")
	if p := Decide(ok); len(p.Violations) != 0 || p.Ledger.Phase != "test" || p.Ledger.Total != 3500 {
		t.Errorf("a legal carryover: %v %+v", ruleIDs(p), p.Ledger)
	}
	big := trusted(t, 5, "total: 10000", "total: 3501", "consumed: 3000", "consumed: 0", "remaining: 7000", "remaining: 3501")
	if msg := tamperMessage(t, Decide(big)); !strings.Contains(msg, "remaining went up 7000 → 3501") && !strings.Contains(msg, "consumed went down") {
		t.Errorf("message: %s", msg)
	}
}

func TestACopyByAnotherIsNotTheLedger(t *testing.T) {
	// A copy of the guard's comment posted by someone else is not the
	// guard's: it is never read as the ledger.
	in := input(t, body("total: 10000", "total: 90000", "remaining: 7000", "remaining: 87000"), "cascade::depth-2")
	in.Config.LedgerKey = testKey
	fake := accepted()
	fake.Total, fake.Remaining = 90000, 87000
	in.Recent = []issues.Comment{{ID: 51, Author: "mallory", Body: issues.StatusMarker(9) + "\n" + ledger.Encode(fake, nil), UpdatedAt: written}}
	p := Decide(in)
	if !p.Adopted {
		t.Fatalf("no ledger of the guard's: the state is adopted (and the status comment says so): %+v", p.Ledger)
	}
}

func TestVanishedLedger(t *testing.T) {
	in := input(t, body(), "cascade::depth-2")
	in.Recent = []issues.Comment{{ID: 20, Author: issues.ActionsUser, Body: "## GNS-2 Checkpoint Archive\n<!-- gns-guard:archive issue=9 phase=build part=1/1 sha256=ab -->"}}
	msg := tamperMessage(t, Decide(in))
	if !strings.Contains(msg, "someone deleted it") {
		t.Errorf("message: %s", msg)
	}
	// A label the guard set, on the timeline, is a trace too.
	in.Recent = nil
	in.LabelEvents = []issues.LabelEvent{{Label: "context::pressure-high", Added: true, Actor: issues.ActionsUser}}
	tamperMessage(t, Decide(in))
	// No status comment within reach of a timeline too long to read back
	// to its start: a ledger buried by a flood is not adopted over.
	in.LabelEvents = nil
	in.Unreached = true
	if msg := tamperMessage(t, Decide(in)); !strings.Contains(msg, "not within the timeline entries a run reads") {
		t.Errorf("message: %s", msg)
	}
	in.Unreached = false
	// No trace: the first run adopts.
	if p := Decide(in); !p.Adopted || len(p.Violations) != 0 || p.Ledger.Consumed != 3000 {
		t.Errorf("first run: adopted %v %v %+v", p.Adopted, ruleIDs(p), p.Ledger)
	}
}

func TestNoAdoptionWhileAViolationLabelIsOn(t *testing.T) {
	in := input(t, body(), "cascade::depth-2", "budget::exhausted")
	p := Decide(in)
	if p.Adopted || p.Ledger.Baseline || !slices.Equal(p.Ledger.Pending, []string{"budget::exhausted"}) {
		t.Errorf("adopted %v ledger %+v", p.Adopted, p.Ledger)
	}
}

func TestApprovalLabels(t *testing.T) {
	pending := accepted()
	pending.Pending = []string{"permission::violation"}
	base := func() Input {
		in := input(t, body(), "cascade::depth-2")
		in.Config.LedgerKey = testKey
		in.Config.BudgetAdmins = []string{"carol"}
		in.Issue.ContentVersion = 4
		withLedger(&in, pending)
		return in
	}
	after := written.Add(time.Minute)
	// Removed by an approver: the timeline says so.
	in := base()
	in.Event = issues.Event{Name: "issues", Action: "unlabeled", Number: 9}
	in.LabelEvents = []issues.LabelEvent{{Label: "permission::violation", Added: false, Actor: "carol", At: after}}
	p := Decide(in)
	if len(p.Violations) != 0 || len(p.AddLabels) != 0 || len(p.Ledger.Pending) != 0 {
		t.Fatalf("approved removal: %v add %v ledger %+v", ruleIDs(p), p.AddLabels, p.Ledger)
	}
	// Removed by a writer: put back, and named.
	in.LabelEvents[0].Actor = "mallory"
	p = Decide(in)
	if !slices.Equal(p.AddLabels, []string{"permission::violation"}) || !strings.Contains(tamperMessage(t, p), `removed by "mallory"`) {
		t.Fatalf("writer's removal: add %v, %v", p.AddLabels, p.Violations)
	}
	// The payload is no evidence: a removal event whose sender is the
	// approver (a re-run of an old approval run) while the timeline shows
	// the writer's removal.
	in.Event = issues.Event{Name: "issues", Action: "unlabeled", Number: 9, Sender: "carol", RemovedLabels: []string{"permission::violation"}}
	if p := Decide(in); !slices.Equal(p.AddLabels, []string{"permission::violation"}) {
		t.Fatalf("a replayed approval passed: %v", ruleIDs(p))
	}
	// An approver's removal older than the ledger approves nothing now.
	in.LabelEvents = []issues.LabelEvent{{Label: "permission::violation", Added: false, Actor: "carol", At: written.Add(-time.Hour)}}
	if p := Decide(in); !slices.Equal(p.AddLabels, []string{"permission::violation"}) || !strings.Contains(tamperMessage(t, p), "could not identify") {
		t.Fatalf("an old approval counted again: add %v %v", p.AddLabels, ruleIDs(p))
	}
	// No record of who did it: put back.
	in.LabelEvents = nil
	if p := Decide(in); !slices.Equal(p.AddLabels, []string{"permission::violation"}) || !strings.Contains(tamperMessage(t, p), "could not identify") {
		t.Errorf("unknown remover: %v", p.AddLabels)
	}
}

func TestEveryRunFailsWhilePermissionViolationIsOn(t *testing.T) {
	l := accepted()
	l.Pending = []string{"permission::violation"}
	in := input(t, body(), "cascade::depth-2", "permission::violation")
	in.Config.LedgerKey = testKey
	in.Issue.ContentVersion = 4
	withLedger(&in, l)
	in.Event = issues.Event{Name: "issue_comment", Action: "created", Number: 9, Sender: "dev"}
	p := Decide(in)
	if !slices.Contains(ruleIDs(p), RulePermission) || p.Resolved {
		t.Errorf("rules %v resolved %v", ruleIDs(p), p.Resolved)
	}
}

func TestRelaxingLabels(t *testing.T) {
	in := trusted(t, 4)
	in.Issue.Labels = []issues.Label{{ID: 3, Name: "cascade::depth-n"}} // the agent swapped depth-2 for n
	in.Event = issues.Event{Name: "issues", Action: "labeled", Number: 9, Sender: "mallory"}
	in.LabelEvents = []issues.LabelEvent{
		{Label: "cascade::depth-2", LabelID: 2, Added: false, Actor: "mallory", At: written.Add(time.Minute)},
		{Label: "cascade::depth-n", LabelID: 3, Added: true, Actor: "mallory", At: written.Add(time.Minute)},
	}
	in.Issue.Body = body("depth: 1", "depth: 3", "agent_chain", "x")
	p := Decide(in)
	msg := tamperMessage(t, p)
	if !strings.Contains(msg, `cascade::depth-n label relaxes a rule and was added by "mallory"`) {
		t.Errorf("message: %s", msg)
	}
	if !slices.Contains(ruleIDs(p), RuleDepthExceeded) {
		t.Errorf("the accepted limit stays in effect: depth 3 > 2 must fail: %v", ruleIDs(p))
	}
	if !slices.Contains(p.AddLabels, "cascade::depth-2") || !slices.ContainsFunc(p.RemoveLabels, func(l issues.Label) bool { return l.Name == "cascade::depth-n" }) {
		t.Errorf("add %v remove %v", p.AddLabels, p.RemoveLabels)
	}
	// Added by an approver: it takes effect and becomes the accepted limit.
	in.Config.BudgetAdmins = []string{"mallory"}
	p = Decide(in)
	if slices.Contains(ruleIDs(p), RuleTampered) || slices.Contains(ruleIDs(p), RuleDepthExceeded) || p.Ledger.DepthLimit != "n" {
		t.Errorf("approved relaxing label: %v %+v", ruleIDs(p), p.Ledger)
	}
	// A larger size label is relaxing too; a smaller one is not.
	in = trusted(t, 4)
	in.Issue.Labels = append(in.Issue.Labels, issues.Label{ID: 4, Name: "size::large"})
	tamperMessage(t, Decide(in))
	in.Issue.Labels[1].Name = "size::tiny"
	p = Decide(in)
	if slices.Contains(ruleIDs(p), RuleTampered) {
		t.Errorf("a size label on an issue with none accepted, smaller than large: %v", ruleIDs(p))
	}
}

func TestBudgetOverCap(t *testing.T) {
	in := input(t, body("total: 10000", "total: 90000", "remaining: 7000", "remaining: 87000"), "cascade::depth-2")
	in.Config.MaxBudget = 50000
	p := Decide(in)
	if !slices.Contains(ruleIDs(p), RuleBudgetOverCap) || !slices.Contains(p.AddLabels, "budget::exhausted") || p.Ledger.Baseline {
		t.Fatalf("over the cap: %v add %v ledger %+v", ruleIDs(p), p.AddLabels, p.Ledger)
	}
	// The label stays until an approver removes it; then the state is adopted.
	in.Issue.Labels = append(in.Issue.Labels, issues.Label{ID: 8, Name: "budget::exhausted"})
	withLedger(&in, *p.Ledger)
	if p := Decide(in); !slices.Contains(ruleIDs(p), RuleBudgetOverCap) {
		t.Fatalf("still over the cap: %v", ruleIDs(p))
	}
	in.Issue.Labels = in.Issue.Labels[:1]
	in.Config.BudgetAdmins = []string{"carol"}
	in.Event = issues.Event{Name: "issues", Action: "unlabeled", Number: 9}
	in.LabelEvents = []issues.LabelEvent{{Label: "budget::exhausted", LabelID: 8, Added: false, Actor: "carol", At: written}}
	p = Decide(in)
	if len(p.Violations) != 0 || !p.Adopted || p.Ledger.Total != 90000 {
		t.Errorf("approved: %v adopted %v %+v", ruleIDs(p), p.Adopted, p.Ledger)
	}
}
