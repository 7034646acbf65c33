package guard

import (
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/posture"
)

// weakPosture is a repository where mallory pushes code and two checks
// could not be made with the guard's token.
func weakPosture() *ledger.PostureStamp {
	unread := posture.CouldNotCheck + "reading a collaborator's permission needs the repository owner's token"
	return ledger.NewPostureStamp("c0ffee", []posture.Check{
		{ID: posture.CheckCodeWrite, Why: "mallory (write collaborator) can push code: a workflow on any branch reads `LEDGER_KEY` (the ledger key)", Logins: []string{"mallory"}},
		{ID: posture.CheckWorkflow, Holds: true, Why: "held"},
		{ID: posture.CheckEnabled, Why: "no guard workflow on the default branch"},
		{ID: posture.CheckPinned, Why: "no guard workflow on the default branch"},
		{ID: posture.CheckActionsWrite, Why: unread},
		{ID: posture.CheckAdmin, Why: unread},
		{ID: posture.CheckSecrets, Why: posture.CouldNotCheck + "reading the names of the repository's secrets needs the repository owner's token"},
	})
}

// The posture warns, naming who breaks a guarantee in the judge's words,
// and says once which checks could not be made; it never fails the run,
// and the ledger records the stamp.
func TestPostureWarnsAndIsRecorded(t *testing.T) {
	in := input(t, body(), "cascade::depth-2")
	in.Posture = weakPosture()
	p := Decide(in)
	if len(p.Violations) != 0 || !p.Resolved {
		t.Fatalf("a weak posture failed the issue: %v", p.Violations)
	}
	var msgs []string
	for _, w := range p.Warnings {
		if w.Rule != RulePosture || w.IsError() {
			t.Errorf("unexpected finding %+v", w)
		}
		msgs = append(msgs, w.KeyPath+": "+w.Message)
	}
	want := []string{
		"accounts.code-write: mallory (write collaborator) can push code: a workflow on any branch reads `LEDGER_KEY` (the ledger key)",
		"workflow.enabled: no guard workflow on the default branch (workflow.enabled, workflow.pinned)",
		"posture.unchecked: the guard's tokens could not check accounts.actions-write, accounts.admin: reading a collaborator's permission needs the repository owner's token; secrets.present: reading the names of the repository's secrets needs the repository owner's token",
	}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Errorf("posture warnings:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
	if p.Ledger == nil || !p.Ledger.Posture.Equal(in.Posture) {
		t.Errorf("the ledger does not record the posture: %+v", p.Ledger)
	}

	// Not judged (a client that cannot read it): no warning, none recorded.
	in.Posture = nil
	if p := Decide(in); len(p.Warnings) != 0 || p.Ledger.Posture != nil {
		t.Errorf("without a posture: warnings %v, recorded %+v", p.Warnings, p.Ledger.Posture)
	}

	// A pull request's run warns and records it too.
	pin := input(t, "a pull request", "size::small")
	pin.Event = issues.Event{Name: "pull_request_target", Action: "synchronize", Number: 9, IsPull: true}
	pin.Posture = weakPosture()
	if p := Decide(pin); len(p.Warnings) != 3 || len(p.Violations) != 0 || !p.Ledger.Posture.Equal(pin.Posture) {
		t.Errorf("on a pull request: warnings %v, violations %v", p.Warnings, p.Violations)
	}
}

// A new commit's stamp is a new record (the status comment is written),
// not a new state: an adopted baseline stays adopted.
func TestNewPostureIsNotANewState(t *testing.T) {
	in := input(t, body(), "cascade::depth-2")
	in.Posture = weakPosture()
	first := Decide(in)
	if !first.Ledger.Adopted {
		t.Fatal("the first state was not adopted")
	}
	in.Status = &issues.Comment{ID: 40, Author: in.Self, Body: issues.StatusMarker(9) + "\n" + ledger.Encode(*first.Ledger, nil) + "\n"}
	in.Posture = ledger.NewPostureStamp("beef", nil)
	next := Decide(in)
	if next.Ledger.SameState(*first.Ledger) {
		t.Error("a new posture stamp kept the record: the status comment would not record it")
	}
	if !next.Ledger.Adopted {
		t.Error("a new posture stamp made the adopted baseline a new state")
	}
}

// The posture has no place in the issue: its warnings come after the
// issue's own findings, so a flood of those (cut at guard.MaxTableRows in
// the status comment) shows the issue's first.
func TestPostureFindingsComeLast(t *testing.T) {
	in := input(t, body("  phase: build\n", "  phase: build\n  colour: red\n"), "cascade::depth-2")
	in.Posture = weakPosture()
	fs := Decide(in).Findings()
	if len(fs) < 2 || fs[0].Rule == RulePosture || fs[len(fs)-1].Rule != RulePosture {
		t.Fatalf("findings %v", fs)
	}
}
