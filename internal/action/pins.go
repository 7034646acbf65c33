package action

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// Pinned governance labels in the shell (docs/ledger.md#pinned-labels): the
// runner hands the step the pins (PinsEnv), so a check costs no request.
// With admin-token the guard writes them when there are none yet, creating
// its own labels first so no one else takes their names, and when it
// creates a governance label.

// PinsEnv is set by action.yml to "labels:" and the value of the
// repository variable GNS_GUARD_LABELS, read when the runner picked the
// job up.
const PinsEnv = "GNS_GUARD_LABELS"

// pinsPrefix starts what action.yml hands over in PinsEnv.
const pinsPrefix = "labels:"

// noAdminPins: without admin-token nothing pins the governance labels.
var noAdminPins = fmt.Sprintf("Governance labels are not pinned by id: admin-token is not set, so the guard cannot record their "+
	"ids in the repository variable %s. A label an approver added and an agent renamed into a governance name before the guard's run "+
	"read the issue counts as the approver's. Set admin-token to the owner's token.", ledger.PinsName)

// pinState is as handed over, or read with admin-token by older action.yml.
func (r *runner) pinState(ctx context.Context) ledger.PinState {
	text, known := r.handedVariable(ctx, PinsEnv, pinsPrefix, ledger.PinsName, true)
	return ledger.PinState{Known: known, Text: text}
}

// handedVariable is a repository variable as action.yml handed it over in
// env (after prefix, which says it was handed over at all), else, when
// read and admin-token is set, as read now (one request). known is false
// when neither gives it.
func (r *runner) handedVariable(ctx context.Context, env, prefix, name string, read bool) (text string, known bool) {
	if text, ok := strings.CutPrefix(r.o.Getenv(env), prefix); ok {
		return text, true
	}
	if store := r.reader.Anchors.Store; store != nil && read {
		if text, _, err := store.Variable(ctx, name); err == nil {
			return text, true
		}
	}
	return "", false
}

// writePins records the pins the run's labels call for: every governance
// label of the repository when there are none yet (the guard's own labels
// created first), else the governance labels this run created; pins a
// rotated-out key signed are signed anew. A refused or failed write is a
// note, never fatal.
func (r *runner) writePins(ctx context.Context, in guard.Input, created []issues.Label, res *applied) {
	store := r.reader.Anchors.Store
	if store == nil || !in.Pins.Known {
		return
	}
	old, problem := ledger.ReadPins(in.Pins.Text, in.Issue.RepoID, ledger.ConfigKeys(r.cfg))
	if problem != "" {
		return // the finding says so; the owner deletes the variable
	}
	labels := created
	if old == nil {
		all, err := r.admin.CreateLabels(ctx, config.GovernanceSpecs(r.cfg.Labels))
		if err != nil {
			r.pinNote(res, "The governance labels could not be pinned: the repository's labels could not be read. The next run tries again.", err)
			return
		}
		labels = all
	}
	pins, changed := guard.PinsFor(old, in.Issue.RepoID, labels, r.cfg)
	resign := ledger.SignAnew(in.Pins.Text, ledger.ConfigKeys(r.cfg))
	if !changed && !resign {
		return
	}
	text := ledger.EncodePins(pins, r.cfg.LedgerKey)
	err := store.SetVariable(ctx, ledger.PinsName, text, old != nil)
	switch {
	case err == nil:
		r.pins = &ledger.PinState{Known: true, Text: text}
		what := fmt.Sprintf("%d governance labels", len(pins.Labels))
		if !changed {
			what += ", signed anew with ledger-key"
		}
		res.writes = append(res.writes, fmt.Sprintf("wrote the label pins %s (%s)", ledger.PinsName, what))
	case errors.Is(err, issues.ErrForbidden), errors.Is(err, issues.ErrUnauthorized):
		why := "admin-token may not write Actions variables (they need the repository owner's token)"
		if lacks := adminLacks(err); lacks != "" {
			why = lacks
		}
		r.pinNote(res, fmt.Sprintf("The governance labels could not be pinned in the repository variable %s: %s.", ledger.PinsName, why), nil)
	default:
		r.pinNote(res, fmt.Sprintf("The governance labels could not be pinned in the repository variable %s: the server answered an "+
			"error. The next run tries again.", ledger.PinsName), err)
	}
}

// pinNote reports pins that could not be written.
func (r *runner) pinNote(res *applied, note string, err error) {
	res.notes = append(res.notes, note)
	r.log.infof("gns-guard: warning: %s", note)
	if err != nil {
		r.log.untrusted("gns-guard: warning: label pins: " + err.Error())
	}
}
