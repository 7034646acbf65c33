package guard

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// A first state is adopted without an approver only as the issue was
// opened: a checkpoint edited into it later waits for one, and the
// approver's removal of permission::violation adopts it.
func TestFirstStateOnlyAsOpened(t *testing.T) {
	in := input(t, body(), "cascade::depth-2")
	in.Config.LedgerKey = testKey
	if p := Decide(in); len(p.Violations) != 0 || !p.Ledger.Baseline {
		t.Fatalf("the body as opened was not adopted: %v", ruleIDs(p))
	}
	in.Issue.ContentVersion = 1
	p := Decide(in)
	if msg := tamperMessage(t, p); !strings.Contains(msg, "edited since it was opened (content version 0 → 1)") || p.Ledger.Baseline {
		t.Fatalf("an edited-in checkpoint was adopted: %s %+v", msg, p.Ledger)
	}
	l := *p.Ledger
	l.Written = written.Unix()
	l.Labels = append(l.Labels, issues.Label{ID: 7, Name: "permission::violation"})
	withLedger(&in, l)
	in.LabelEvents = []issues.LabelEvent{{Label: "permission::violation", LabelID: 7, Actor: "alice", At: written.Add(time.Minute)}}
	in.Config.BudgetAdmins = []string{"alice"}
	if p := Decide(in); len(p.Violations) != 0 || !p.Ledger.Baseline {
		t.Errorf("the approver's removal did not adopt the state: %v %+v", ruleIDs(p), p.Ledger)
	}
}

// A new issue's cascade label above default-max-depth counts only when an
// approver set it; otherwise it goes and the issue waits for an approver.
func TestNewIssueDepthIsBounded(t *testing.T) {
	for _, label := range []string{"cascade::depth-n", "cascade::depth-7"} {
		in := input(t, body(), label)
		two := 2
		in.Config.DefaultMaxDepth, in.Config.BudgetAdmins = &two, []string{"alice"}
		in.LabelEvents = []issues.LabelEvent{{Label: label, LabelID: 1, Added: true, Actor: "mallory", At: written}}
		p := Decide(in)
		msg := tamperMessage(t, p)
		if !strings.Contains(msg, label+" label relaxes a rule") || !slices.ContainsFunc(p.RemoveLabels, func(l issues.Label) bool { return l.Name == label }) || p.Ledger.Baseline {
			t.Errorf("%s by a non-approver: %s, removed %v, record %+v", label, msg, p.RemoveLabels, p.Ledger)
		}
		in.LabelEvents[0].Actor = "alice"
		if p := Decide(in); len(p.Violations) != 0 || !p.Ledger.Baseline {
			t.Errorf("%s by an approver: %v", label, ruleIDs(p))
		}
	}
}
