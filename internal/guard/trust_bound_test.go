package guard

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// raised is the accepted body with the total raised to total (remaining
// with it).
func raised(total, remaining string) string {
	return body("total: 10000", "total: "+total, "remaining: 7000", "remaining: "+remaining)
}

// flaggedRaise is the run that flags a raise to 20,000 (permission::violation
// added), and the input of the next run, the label removed by the
// approver alice after that run's record.
func flaggedRaise(t *testing.T) (*Plan, Input) {
	t.Helper()
	in := trusted(t, 5, "total: 10000", "total: 20000", "remaining: 7000", "remaining: 17000")
	in.Config.BudgetAdmins = []string{"alice"}
	p := Decide(in)
	if p.Ledger.Flag == nil || !slices.Contains(p.Ledger.Pending, "permission::violation") {
		t.Fatalf("the flagging run bound no state: %+v", p.Ledger)
	}
	l := *p.Ledger
	l.Written = written.Add(time.Minute).Unix()
	l.Labels = append(l.Labels, issues.Label{ID: 7, Name: "permission::violation"})
	next := in
	next.Recent = nil
	withLedger(&next, l)
	next.LabelEvents = []issues.LabelEvent{{Label: "permission::violation", LabelID: 7, Actor: "alice", At: written.Add(2 * time.Minute)}}
	next.Event = issues.Event{Name: "issues", Action: "unlabeled", Number: 9}
	return p, next
}

// An approval accepts the state the guard flagged: the same state passes;
// an edit made after the flag is judged anew, the label goes back on and
// the finding names the later edit.
func TestApprovalBindsTheFlaggedState(t *testing.T) {
	_, in := flaggedRaise(t)
	if p := Decide(in); len(p.Violations) != 0 || p.Ledger.Total != 20000 || p.Ledger.Flag != nil {
		t.Fatalf("the approval of the state flagged: %v ledger %+v", ruleIDs(p), p.Ledger)
	}
	in.Issue.Body = raised("900000", "897000")
	in.Issue.ContentVersion = 6
	p := Decide(in)
	var later string
	for _, v := range p.Violations {
		if strings.Contains(v.Message, "changed after the guard flagged it") {
			later = v.Message
		}
	}
	if !strings.Contains(later, `removed by "alice", an approver`) || !strings.Contains(later, "content version 5 → 6") {
		t.Errorf("the later edit is not named: %v", p.Violations)
	}
	if !slices.Contains(p.AddLabels, "permission::violation") || p.Ledger.Total != 10000 {
		t.Errorf("the later edit was accepted: add %v ledger %+v", p.AddLabels, p.Ledger)
	}
	if msg := tamperMessage(t, p); !strings.Contains(msg, "900000") && !slices.ContainsFunc(p.Violations, func(v Violation) bool { return strings.Contains(v.Message, "went up 10000 → 900000") }) {
		t.Errorf("the later state was not judged against the ledger: %v", p.Violations)
	}
	// The new state is flagged: the approver's next removal accepts it.
	if p.Ledger.Flag == nil || p.Ledger.Flag.ContentVersion != 6 {
		t.Errorf("the re-flag binds %+v, want content version 6", p.Ledger.Flag)
	}
}

// A relaxing label added after the flag is a later change too.
func TestApprovalBindsTheLabels(t *testing.T) {
	_, in := flaggedRaise(t)
	in.Issue.Labels = append(in.Issue.Labels, issues.Label{ID: 8, Name: "size::large"})
	in.LabelEvents = append(in.LabelEvents, issues.LabelEvent{Label: "size::large", LabelID: 8, Added: true, Actor: "alice", At: written.Add(2 * time.Minute)})
	p := Decide(in)
	if !slices.ContainsFunc(p.Violations, func(v Violation) bool { return strings.Contains(v.Message, "labels changed after the guard flagged") }) {
		t.Errorf("a label change after the flag: %v", p.Violations)
	}
}

// budget-over-cap: the approval of a new issue's budget binds it too.
func TestOverCapApprovalBinds(t *testing.T) {
	in := input(t, raised("120000", "117000"), "cascade::depth-2")
	in.Config.LedgerKey, in.Config.MaxBudget, in.Issue.ContentVersion = testKey, 100000, 0
	p := Decide(in)
	if !slices.Contains(ruleIDs(p), RuleBudgetOverCap) || p.Ledger.Flag == nil {
		t.Fatalf("over the cap: %v %+v", ruleIDs(p), p.Ledger)
	}
	l := *p.Ledger
	l.Written = written.Unix()
	l.Labels = append(l.Labels, issues.Label{ID: 5, Name: "budget::exhausted"})
	withLedger(&in, l)
	in.LabelEvents = []issues.LabelEvent{{Label: "budget::exhausted", LabelID: 5, Actor: "alice", At: written.Add(time.Minute)}}
	in.Config.BudgetAdmins = []string{"alice"}
	if p := Decide(in); len(p.Violations) != 0 || !p.Ledger.Baseline || p.Ledger.Total != 120000 {
		t.Errorf("the approved over-cap state: %v %+v", ruleIDs(p), p.Ledger)
	}
	in.Issue.Body, in.Issue.ContentVersion = raised("900000", "897000"), 1
	if p := Decide(in); !slices.Contains(ruleIDs(p), RuleBudgetOverCap) || p.Ledger.Baseline {
		t.Errorf("900,000 after the approval of 120,000: %v %+v", ruleIDs(p), p.Ledger)
	}
}

// The record keeps every label by id: an ordinary label renamed into a
// governance name is a rename, judged by its recorded name; an ordinary
// label renamed to another ordinary name governs nothing.
func TestOrdinaryLabelRenamedIntoGovernance(t *testing.T) {
	in := trusted(t, 4)
	l := accepted()
	l.Labels = []issues.Label{{ID: 1, Name: "cascade::depth-2"}, {ID: 2, Name: "phase::review"}}
	in.Recent = nil
	withLedger(&in, l)
	in.Issue.Labels = []issues.Label{{ID: 1, Name: "cascade::depth-2"}, {ID: 2, Name: "size::large"}}
	p := Decide(in)
	if msg := tamperMessage(t, p); !strings.Contains(msg, `"phase::review" (id 2) was renamed to "size::large"`) {
		t.Errorf("message: %s", msg)
	}
	if p.Numbers.TaskSize == "large" {
		t.Error("the renamed label counted as size::large")
	}
	in.Issue.Labels[1].Name = "phase::testing"
	if p := Decide(in); len(p.Violations) != 0 {
		t.Errorf("an ordinary rename: %v", p.Violations)
	}
}

// An accepted size label is the limit: an estimate that infers a larger
// size does not make a larger label acceptable.
func TestInferredSizeRelaxesNoAcceptedSize(t *testing.T) {
	in := trusted(t, 5, "next_estimated_tokens: 1500", "next_estimated_tokens: 12000", "total: 10000", "total: 10000")
	l := accepted()
	l.Size = "small"
	l.Labels = []issues.Label{{ID: 1, Name: "cascade::depth-2"}, {ID: 2, Name: "size::small"}}
	in.Recent = nil
	withLedger(&in, l)
	in.Issue.Labels = []issues.Label{{ID: 1, Name: "cascade::depth-2"}, {ID: 3, Name: "size::large"}}
	in.LabelEvents = []issues.LabelEvent{{Label: "size::large", LabelID: 3, Added: true, Actor: "mallory", At: written.Add(time.Minute)}}
	p := Decide(in)
	if msg := tamperMessage(t, p); !strings.Contains(msg, "size::") {
		t.Errorf("message: %s", msg)
	}
	if !slices.ContainsFunc(p.RemoveLabels, func(x issues.Label) bool { return x.Name == "size::large" }) || !slices.Contains(p.AddLabels, "size::small") {
		t.Errorf("add %v remove %v", p.AddLabels, p.RemoveLabels)
	}
}

// An accepted limit removed by a non-approver goes back on even where the
// default or the estimate would be stricter: it is the limit until an
// approver changes it.
func TestAcceptedLimitRemovedLeavingNone(t *testing.T) {
	in := trusted(t, 4)
	l := accepted()
	l.Size = "medium"
	l.Labels = []issues.Label{{ID: 1, Name: "cascade::depth-2"}, {ID: 2, Name: "size::medium"}}
	in.Recent = nil
	withLedger(&in, l)
	in.Issue.Labels = nil
	in.LabelEvents = []issues.LabelEvent{
		{Label: "cascade::depth-2", LabelID: 1, Actor: "mallory", At: written.Add(time.Minute)},
		{Label: "size::medium", LabelID: 2, Actor: "mallory", At: written.Add(time.Minute)},
	}
	p := Decide(in)
	tamperMessage(t, p)
	if !slices.Contains(p.AddLabels, "cascade::depth-2") || !slices.Contains(p.AddLabels, "size::medium") {
		t.Errorf("the accepted limits were not put back: %v", p.AddLabels)
	}
}

// An anchored issue stays governed: with its checkpoint and labels gone it
// is judged, and the missing checkpoint is tampering.
func TestAnchoredIssueWithoutCheckpoint(t *testing.T) {
	in := anchored(t)
	in.Issue.Body, in.Issue.Labels, in.Issue.ContentVersion = "Nothing here.", nil, 5
	p := Decide(in)
	if !p.Governed || p.Skipped != "" {
		t.Fatalf("skipped: %q", p.Skipped)
	}
	if msg := tamperMessage(t, p); !strings.Contains(msg, "checkpoint block the guard accepted at content version 4 is gone") {
		t.Errorf("message: %s", msg)
	}
	// Without an anchor and without a ledger the same issue is not governed.
	in.Anchor, in.Status, in.Recent = ledger.AnchorState{}, nil, nil
	if p := Decide(in); p.Governed {
		t.Errorf("an issue with no anchor, no checkpoint and no label is governed: %v", ruleIDs(p))
	}
}

// On a pull request, a label recorded under an ordinary name and renamed
// to permission::evolve-system opens nothing, though the timeline shows
// an approver adding it; the label the record accepted opens the paths.
func TestPullRecordJudgesEvolveByID(t *testing.T) {
	in := input(t, "", "needs-review")
	in.Event = issues.Event{Name: "pull_request", Action: "synchronized", Number: 9, IsPull: true}
	in.PullFiles = []string{".kilo/agents/x.md"}
	in.Config.LedgerKey = testKey
	in.Issue.RepoOwner = "owner"
	in.LabelEvents = []issues.LabelEvent{{Label: "needs-review", LabelID: 1, Added: true, Actor: "owner", At: written.Add(-time.Minute)}}
	p := Decide(in)
	if p.Ledger == nil || !slices.Contains(p.Ledger.Labels, issues.Label{ID: 1, Name: "needs-review"}) {
		t.Fatalf("the pull request keeps no record of its labels: %+v", p.Ledger)
	}
	l := *p.Ledger
	l.Written = written.Unix()
	withLedger(&in, l)
	in.Issue.Labels[0].Name = "permission::evolve-system"
	p = Decide(in)
	if !slices.Contains(ruleIDs(p), RuleProtectedPath) || !slices.Contains(ruleIDs(p), RuleTampered) {
		t.Errorf("the renamed label opened the protected path: %v", ruleIDs(p))
	}
	// The owner adds the real label after the record: it counts, and the
	// record accepts it.
	in.Issue.Labels = []issues.Label{{ID: 4, Name: "permission::evolve-system"}}
	in.LabelEvents = append(in.LabelEvents, issues.LabelEvent{Label: "permission::evolve-system", LabelID: 4, Added: true, Actor: "owner", At: written.Add(time.Minute)})
	p = Decide(in)
	if len(p.Violations) != 0 || !slices.Contains(p.Ledger.Labels, issues.Label{ID: 4, Name: "permission::evolve-system"}) {
		t.Errorf("the owner's label: %v %+v", ruleIDs(p), p.Ledger)
	}
}

// A label an approver added after a run read the issue but before it
// wrote its record is the next run's to attribute: the record keeps when
// its run read (Read), and only changes before that were judged. A record
// from before Read was kept judged everything up to its writing.
func TestALabelAddedWhileARunWorkedIsAttributed(t *testing.T) {
	in := input(t, "", "needs-review")
	in.Event = issues.Event{Name: "pull_request", Action: "synchronized", Number: 9, IsPull: true}
	in.PullFiles = []string{".kilo/agents/x.md"}
	in.Config.LedgerKey = testKey
	in.Issue.RepoOwner = "owner"
	p := Decide(in)
	if p.Ledger == nil {
		t.Fatal("no record")
	}
	added := issues.LabelEvent{Label: "permission::evolve-system", LabelID: 4, Added: true, Actor: "owner", At: written.Add(-30 * time.Second)}
	for _, tt := range []struct {
		name  string
		read  time.Time
		opens bool
	}{
		{"the record's run read before the label", written.Add(-time.Minute), true},
		{"the record's run read after the label", written.Add(-10 * time.Second), false},
		{"a record that keeps no read time", time.Time{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := *p.Ledger
			l.Written = written.Unix()
			if !tt.read.IsZero() {
				l.Read = tt.read.Unix()
			}
			run := in
			withLedger(&run, l)
			run.Issue.Labels = []issues.Label{{ID: 1, Name: "needs-review"}, {ID: 4, Name: "permission::evolve-system"}}
			run.LabelEvents = []issues.LabelEvent{added}
			got := Decide(run)
			if opens := !slices.Contains(ruleIDs(got), RuleProtectedPath); opens != tt.opens {
				t.Errorf("the owner's label opens the protected path: %v, want %v (%v)", opens, tt.opens, ruleIDs(got))
			}
		})
	}
}
