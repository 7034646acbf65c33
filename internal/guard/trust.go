package guard

import (
	"slices"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// trust is the ledger and approvals as judged (docs/contract.md §4b).
type trust struct {
	ledger  *ledger.Record // the verified record, nil when none could be trusted
	problem string         // why the record cannot be trusted, "" when it can (or there is none)
	// approved maps an approval label to its remover, an approver.
	approved map[string]string
	// restore are approval labels removed without right: they go back.
	restore []removal
	// relaxed are relaxing labels added without right: ignored and removed.
	relaxed []removal
	// removed are accepted limits removed without right, relaxing a rule:
	// they go back.
	removed []removal
	// renamed are governance labels renamed since the ledger accepted them.
	renamed []rename
	// tamper are the checkpoint-tampered findings of this run.
	tamper []Violation
	// anchor is nil when none or not the guard's; lags: the record's newer
	// (write failed).
	anchor *ledger.Anchor
	lags   bool
	// evolveOK: permission::evolve-system was accepted or approver-added;
	// evolveBy added it.
	evolveOK bool
	evolveBy string
}

// removal is a label change and who made it ("" when unknown); later,
// for an approval label an approver removed, says what changed after the
// guard flagged the state the approval was bound to (the label goes back).
type removal struct{ label, actor, later string }

// rename is a governance label renamed since accepted.
type rename struct {
	id       int64
	from, to string
}

// approverRule says who may approve, for messages.
func (e *decision) approverRule() string {
	if len(e.cfg.BudgetAdmins) > 0 {
		return "not in budget-admins"
	}
	return "not a repository admin (budget-admins is empty)"
}

// isApprover reports whether user may approve: a budget admin, or, when
// budget-admins is empty, the repository's owner or a repository admin.
// When the answer needs the server, it asks the shell for it
// (Plan.AskAdmin) and says no for now.
func (e *decision) isApprover(user string) bool {
	if user == "" {
		return false
	}
	if len(e.cfg.BudgetAdmins) > 0 {
		return slices.Contains(e.cfg.BudgetAdmins, user)
	}
	if user == e.in.Issue.RepoOwner {
		return true // the repository's owner: no question to ask
	}
	admin, known := e.in.Admins[user]
	if !known && e.plan.AskAdmin == "" {
		e.plan.AskAdmin = user
	}
	return admin
}

// who names an actor in a message.
func who(actor string) string {
	if actor == "" {
		return "someone the guard could not identify (the run for that change was replaced or missed, and the timeline it read does not show it)"
	}
	return markdown.Quote(actor)
}

// actorOf finds who made a label change: the newest matching entry of the
// timeline read (by the label's id when known: a renamed label shows its
// new name on old entries), made after the ledger was written. The event's
// sender proves nothing: any writer can re-run an old run, which hands the
// step that run's payload again.
func (e *decision) actorOf(label issues.Label, added bool) string {
	var since time.Time
	if l := e.trust.ledger; l != nil {
		since = l.JudgedUntil()
	}
	for i := len(e.in.LabelEvents) - 1; i >= 0; i-- {
		le := e.in.LabelEvents[i]
		same := le.Label == label.Name
		if label.ID != 0 && le.LabelID != 0 {
			same = le.LabelID == label.ID
		}
		if !same || le.Added != added {
			continue
		}
		if le.At.Before(since) {
			return "" // the newest such change is older than the ledger
		}
		return le.Actor
	}
	return ""
}
