package guard

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// The guard's first run on the issue: its ledger, as the next run reads it.
func firstLedger(t *testing.T, in Input) ledger.Record {
	t.Helper()
	p := Decide(in)
	if len(p.Violations) != 0 || p.Ledger == nil || !p.Ledger.Baseline {
		t.Fatalf("first run: %v %+v", ruleIDs(p), p.Ledger)
	}
	l := *p.Ledger
	l.Written = written.Unix()
	return l
}

// A writer renames the definition of the accepted cascade::depth-1 label
// to cascade::depth-n: every timeline entry shows the new name, the id
// stays. The guard judges it by its accepted name and fails.
func TestRenamedCascadeLabel(t *testing.T) {
	in := input(t, body("labels: [cascade::depth-2]", "labels: [cascade::depth-1]", "depth: 1", "depth: 1"), "cascade::depth-1")
	in.Config.LedgerKey = testKey
	l := firstLedger(t, in)
	withLedger(&in, l)
	in.Issue.Labels = []issues.Label{{ID: 1, Name: "cascade::depth-n"}}
	in.Issue.Body = body("labels: [cascade::depth-2]", "labels: [cascade::depth-n]", "depth: 1", "depth: 5", "agent_chain", "x")
	p := Decide(in)
	msg := tamperMessage(t, p)
	if !strings.Contains(msg, `"cascade::depth-1" (id 1) was renamed to "cascade::depth-n"`) || !slices.Contains(ruleIDs(p), RuleDepthExceeded) {
		t.Errorf("a renamed cascade label: %v\n%s", ruleIDs(p), msg)
	}
	if p.Numbers.MaxDepth != 1 {
		t.Errorf("judged with limit %d, want the accepted 1", p.Numbers.MaxDepth)
	}
}

// A writer renames a label an approver removed long ago ("triage") to
// permission::violation: the old removal entry now reads as an approval.
// Matched by id and newer than the ledger, it approves nothing.
func TestRenamedLabelIsNoApproval(t *testing.T) {
	in := input(t, body(), "cascade::depth-2", "permission::violation")
	in.Config.LedgerKey = testKey
	in.Config.BudgetAdmins = []string{"carol"}
	l := accepted()
	l.Pending = []string{"permission::violation"}
	l.Labels = []issues.Label{{ID: 1, Name: "cascade::depth-2"}, {ID: 2, Name: "permission::violation"}}
	withLedger(&in, l)
	in.Issue.Labels = in.Issue.Labels[:1] // the agent removed permission::violation
	in.LabelEvents = []issues.LabelEvent{
		{Label: "permission::violation", LabelID: 9, Added: false, Actor: "carol", At: written.Add(-48 * time.Hour)}, // "triage", renamed
		{Label: "permission::violation", LabelID: 2, Added: false, Actor: "mallory", At: written.Add(time.Minute)},
	}
	p := Decide(in)
	if !slices.Equal(p.AddLabels, []string{"permission::violation"}) || !strings.Contains(tamperMessage(t, p), `removed by "mallory"`) {
		t.Errorf("self-approval through a renamed label: add %v %v", p.AddLabels, ruleIDs(p))
	}
}

// Removing the accepted cascade label relaxes the limit to
// default-max-depth: only an approver's removal counts.
func TestRemovedCascadeLabel(t *testing.T) {
	in := input(t, body(), "cascade::depth-2")
	in.Config.LedgerKey = testKey
	unlimited := config.Unlimited
	in.Config.DefaultMaxDepth = &unlimited
	l := firstLedger(t, in)
	withLedger(&in, l)
	in.Issue.Labels = nil
	in.Issue.Body = body("depth: 1", "depth: 4", "agent_chain", "x")
	in.LabelEvents = []issues.LabelEvent{{Label: "cascade::depth-2", LabelID: 1, Added: false, Actor: "mallory", At: written.Add(time.Minute)}}
	p := Decide(in)
	if msg := tamperMessage(t, p); !strings.Contains(msg, `accepted cascade::depth-2 label was removed by "mallory"`) || !slices.Contains(p.AddLabels, "cascade::depth-2") || !slices.Contains(ruleIDs(p), RuleDepthExceeded) {
		t.Errorf("removed cascade label: %v add %v\n%s", ruleIDs(p), p.AddLabels, msg)
	}
	in.Config.BudgetAdmins = []string{"mallory"}
	if p := Decide(in); slices.Contains(ruleIDs(p), RuleTampered) || slices.Contains(p.AddLabels, "cascade::depth-2") {
		t.Errorf("an approver's removal: %v add %v", ruleIDs(p), p.AddLabels)
	}
}

// Deleting or changing an accepted history entry fails; appending one,
// or the guard archiving them, does not.
func TestHistoryCannotVanish(t *testing.T) {
	two := body("    - {agent: orchestrator, action: planned, timestamp: \"2026-05-16T12:58:00Z\"}\n",
		"    - {agent: orchestrator, action: planned, timestamp: \"2026-05-16T12:58:00Z\"}\n    - {agent: dev, action: built it, timestamp: \"2026-05-16T13:10:00Z\"}\n")
	in := input(t, two, "cascade::depth-2")
	in.Config.LedgerKey = testKey
	l := firstLedger(t, in)
	if l.Entries != 2 || l.EntriesHash == "" {
		t.Fatalf("the ledger keeps %d entries (%q)", l.Entries, l.EntriesHash)
	}
	withLedger(&in, l)
	for _, c := range []struct {
		name, body, want string
	}{
		{"an entry deleted", body(), "accepted entries vanished"},
		{"an entry changed", strings.Replace(two, "built it", "did nothing", 1), "an accepted entry changed or vanished"},
	} {
		in.Issue.Body = c.body
		if msg := tamperMessage(t, Decide(in)); !strings.Contains(msg, c.want) {
			t.Errorf("%s: %s", c.name, msg)
		}
	}
	in.Issue.Body = strings.Replace(two, "  next_agent:", "    - {agent: reviewer, action: reviewed, timestamp: \"2026-05-16T13:20:00Z\"}\n  next_agent:", 1)
	if p := Decide(in); len(p.Violations) != 0 || p.Ledger.Entries != 3 {
		t.Errorf("an appended entry: %v, ledger %d entries", ruleIDs(p), p.Ledger.Entries)
	}
}

// A record the guard signed for another repository's issue #9 (one key
// for an organisation) does not count here.
func TestRecordOfAnotherRepository(t *testing.T) {
	in := input(t, body(), "cascade::depth-2")
	in.Config.LedgerKey = testKey
	in.Issue.RepoID = 7
	l := firstLedger(t, in)
	l.Repo = 8
	withLedger(&in, l)
	if msg := tamperMessage(t, Decide(in)); !strings.Contains(msg, "belongs to repository 8, not this one (7)") {
		t.Errorf("message: %s", msg)
	}
}

// The repository's owner approves with no question to the server.
func TestOwnerApproves(t *testing.T) {
	in := trusted(t, 4)
	in.Issue.RepoOwner = "olivia"
	l := accepted()
	l.Pending = []string{"permission::violation"}
	withLedger(&in, l)
	in.LabelEvents = []issues.LabelEvent{{Label: "permission::violation", Added: false, Actor: "olivia", At: written.Add(time.Minute)}}
	if p := Decide(in); len(p.Violations) != 0 || p.AskAdmin != "" {
		t.Errorf("the owner's approval: %v ask %q", ruleIDs(p), p.AskAdmin)
	}
}

// Records are Ed25519-signed under a key id; a record signed by a key the
// workflow does not hold is a key problem, and the previous key verifies
// after a rotation.
func TestLedgerKeys(t *testing.T) {
	old, cur := []byte("the old key"), []byte("the new key")
	c := &issues.Comment{ID: 3, Author: issues.ActionsUser, UpdatedAt: written, Body: ledger.Encode(accepted(), old)}
	if _, problem := ledger.Read(c, 9, ledger.SecretKeys(cur)); !strings.Contains(problem, "which this workflow does not hold") || !strings.Contains(problem, "ledger-key-previous") {
		t.Errorf("unknown key: %q", problem)
	}
	rotated, _ := ledger.NewKeys(cur, old, "")
	if l, problem := ledger.Read(c, 9, rotated); l == nil || problem != "" {
		t.Errorf("the previous key: %q", problem)
	}
	public, _ := ledger.NewKeys(nil, nil, ledger.PublicKey(old))
	if l, problem := ledger.Read(c, 9, public); l == nil || problem != "" {
		t.Errorf("the public key alone: %q", problem)
	}
	c.Body = strings.Replace(c.Body, `"consumed":3000`, `"consumed":1000`, 1)
	if _, problem := ledger.Read(c, 9, public); !strings.Contains(problem, "does not verify against key") {
		t.Errorf("an edited record: %q", problem)
	}
}
