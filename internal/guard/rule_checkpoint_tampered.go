package guard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
)

// checkTamper compares an edited body with the one before the edit
// (changes.body.from): the version and issue never change, consumed never
// goes down, total and remaining never go up — unless the editor is a
// budget admin.
func checkTamper(e *eval) []Violation {
	ev := e.in.Event
	if ev.Name != "issues" || ev.Action != "edited" || ev.PreviousBody == nil || e.parsed.Checkpoint == nil {
		return nil
	}
	if slices.Contains(e.cfg.BudgetAdmins, ev.Sender) {
		return nil
	}
	prev := checkpoint.Parse(*ev.PreviousBody, checkpoint.Options{MaxBytes: e.cfg.MaxCheckpointBytes, Done: e.in.Done})
	old, cur := prev.Checkpoint, e.parsed.Checkpoint
	if old == nil || prev.Block() == nil {
		return nil
	}
	var changes []string
	pos := cur.Pos
	note := func(p checkpoint.Pos, format string, args ...any) {
		if len(changes) == 0 {
			pos = p
		}
		changes = append(changes, fmt.Sprintf(format, args...))
	}
	both := func(a, b checkpoint.Int) bool { return a.Set && b.Set }
	if both(old.Version, cur.Version) && old.Version.Value != cur.Version.Value {
		note(cur.Version.Pos, "version %d → %d", old.Version.Value, cur.Version.Value)
	}
	if both(old.Issue, cur.Issue) && old.Issue.Value != cur.Issue.Value {
		note(cur.Issue.Pos, "issue %d → %d", old.Issue.Value, cur.Issue.Value)
	}
	ob, cb := old.Budget, cur.Budget
	if both(ob.Consumed, cb.Consumed) && cb.Consumed.Value < ob.Consumed.Value {
		note(cb.Consumed.Pos, "budget.consumed went down %d → %d", ob.Consumed.Value, cb.Consumed.Value)
	}
	if both(ob.Total, cb.Total) && cb.Total.Value > ob.Total.Value {
		note(cb.Total.Pos, "budget.total went up %d → %d", ob.Total.Value, cb.Total.Value)
	}
	if both(ob.Remaining, cb.Remaining) && cb.Remaining.Value > ob.Remaining.Value {
		note(cb.Remaining.Pos, "budget.remaining went up %d → %d", ob.Remaining.Value, cb.Remaining.Value)
	}
	if len(changes) == 0 {
		return nil
	}
	who := "the editor"
	if ev.Sender != "" {
		who = quoteShort(ev.Sender)
	}
	v := at(pos, "checkpoint", "the checkpoint was tampered with by %s, who is not in budget-admins: %s; a budget admin restores or approves it, then a person removes %s",
		who, strings.Join(changes, "; "), e.cfg.Labels.PermissionViolation)
	v.Label = e.cfg.Labels.PermissionViolation
	return []Violation{v}
}
