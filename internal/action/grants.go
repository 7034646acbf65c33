package action

import (
	"context"
	"errors"
	"fmt"

	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// The repository budget in the shell (docs/ledger.md#the-repository-budget):
// the runner hands the step the grant list (GrantsEnv), so a clean pass
// reads it at no request; a run that grants reads the variable anew with
// admin-token, decides again on it, and writes it merged — one request to
// read and one to write, only when it grants.

// GrantsEnv is set by action.yml to "grants:" and the value of the
// repository variable GNS_GUARD_BUDGET, read when the runner picked the
// job up.
const GrantsEnv = "GNS_GUARD_BUDGET"

// grantsPrefix is missing when an older action.yml handed nothing over.
const grantsPrefix = "grants:"

// noAdminBudget: repository-budget without admin-token cannot record grants.
var noAdminBudget = fmt.Sprintf("repository-budget is set, but admin-token is not: the grants cannot be recorded in the "+
	"repository variable %s (only the owner's token writes Actions variables), so a new issue is judged against the grants already "+
	"recorded there and adds none; agents can escape the cap by opening new issues. Set admin-token to the owner's token.", ledger.GrantsName)

// grantState is what the run knows of the grant list: as handed over, or
// (when the runner handed none) read with admin-token once, only when the
// repository budget is kept.
func (r *runner) grantState(ctx context.Context) ledger.GrantState {
	if r.grants != nil {
		return *r.grants
	}
	text, known := r.handedVariable(ctx, GrantsEnv, grantsPrefix, ledger.GrantsName, r.cfg.RepositoryBudget > 0)
	st := ledger.GrantState{Known: known, Text: text}
	r.grants = &st
	return st
}

// budgetNotes are none when no repository budget is kept.
func (r *runner) budgetNotes() []string {
	if r.cfg.RepositoryBudget <= 0 {
		return nil
	}
	if r.reader.Anchors.Store == nil {
		return []string{noAdminBudget}
	}
	return nil
}

// regrant reads the grant list anew before a plan that grants is applied
// (the list handed over is as old as the job): when it changed, the run
// decides again on it, so that two issues opened at once are both judged
// against each other's grant as far as the server shows it. It returns
// the plan to apply.
func (r *runner) regrant(ctx context.Context, in *guard.Input, plan *guard.Plan) (*guard.Plan, []string, error) {
	store := r.reader.Anchors.Store
	if len(plan.Grants) == 0 || store == nil || r.cfg.DryRun {
		return plan, nil, nil
	}
	text, _, err := store.Variable(ctx, ledger.GrantsName)
	if err != nil {
		// Nothing is written over a list the run could not read anew: the
		// issue's record keeps its grant, and its next run writes it.
		r.log.untrusted("gns-guard: warning: the grant list could not be read anew, so this run's grant is left for the next run to write: " + err.Error())
		return plan, nil, nil
	}
	r.grants = &ledger.GrantState{Known: true, Text: text}
	r.grantsFresh = true
	if in.Grants.Known && in.Grants.Text == text {
		return plan, nil, nil
	}
	in.Grants = *r.grants
	return r.reader.Decide(ctx, *in)
}

// writeGrants merges the plan's grants into the list read last and writes
// it (nothing when the list holds them all). A refused or failed write is
// a note, never fatal: the issue's record keeps its grants, and its next
// run writes them again.
func (r *runner) writeGrants(ctx context.Context, in guard.Input, plan *guard.Plan, res *applied) {
	store := r.reader.Anchors.Store
	if len(plan.Grants) == 0 || store == nil || !r.grantsFresh {
		return
	}
	old := r.grants.Text
	list, problem := ledger.ReadGrants(old, in.Issue.RepoID, ledger.ConfigKeys(r.cfg))
	if problem != "" {
		r.grantNote(res, fmt.Sprintf("The grant of this issue could not be recorded: %s. Until the owner deletes the variable, the "+
			"repository budget cannot be kept.", problem), nil)
		return
	}
	list.Repo = in.Issue.RepoID
	merged := ledger.MergeGrants(*list, plan.Grants, in.Now.Add(-r.cfg.RepositoryBudgetWindow))
	text := ledger.EncodeGrants(merged, r.cfg.LedgerKey)
	switch {
	case text == old:
		return
	case len(text) > ledger.MaxGrantsText:
		r.grantNote(res, fmt.Sprintf("The grant of this issue could not be recorded: the grants of the last %s need %d characters, more "+
			"than the %d an Actions variable holds. Shorten repository-budget-window.", guard.Window(r.cfg.RepositoryBudgetWindow),
			len(text), ledger.MaxGrantsText), nil)
		return
	}
	err := store.SetVariable(ctx, ledger.GrantsName, text, old != "")
	switch {
	case err == nil:
		r.grants.Text = text
		res.writes = append(res.writes, fmt.Sprintf("wrote the grant list %s (%s granted to issue #%d; %d grants in the window)",
			ledger.GrantsName, grantedTokens(plan.Grants), in.Issue.Number, len(merged.Grants)))
	case errors.Is(err, issues.ErrForbidden), errors.Is(err, issues.ErrUnauthorized):
		why := "admin-token may not write Actions variables (they need the repository owner's token, or a site admin's)"
		if lacks := adminLacks(err); lacks != "" {
			why = lacks
		}
		r.grantNote(res, fmt.Sprintf("The grant of this issue could not be recorded in the repository variable %s: %s. Until it can, "+
			"the repository budget is not kept.", ledger.GrantsName, why), nil)
	default:
		r.grantNote(res, fmt.Sprintf("The grant of this issue could not be recorded in the repository variable %s: the server answered "+
			"an error. The next run writes it.", ledger.GrantsName), err)
	}
}

// signGrantsAnew writes the grant list anew, signed with ledger-key, when
// a rotated-out key signed it (docs/ledger.md#rotating-the-key): read anew
// with admin-token first, so that no grant written since the job started
// is lost. A run that wrote the list already signed it with the current
// key. Refused or failed, it is a note: the next run tries again.
func (r *runner) signGrantsAnew(ctx context.Context, in guard.Input, res *applied) {
	store, keys := r.reader.Anchors.Store, ledger.ConfigKeys(r.cfg)
	if store == nil || r.cfg.DryRun || !ledger.SignAnew(r.grantState(ctx).Text, keys) {
		return
	}
	text, _, err := store.Variable(ctx, ledger.GrantsName)
	if err != nil || !ledger.SignAnew(text, keys) {
		return
	}
	list, problem := ledger.ReadGrants(text, in.Issue.RepoID, keys)
	if problem != "" {
		return // the run's finding says so
	}
	signed := ledger.EncodeGrants(*list, r.cfg.LedgerKey)
	if err := store.SetVariable(ctx, ledger.GrantsName, signed, true); err != nil {
		r.grantNote(res, fmt.Sprintf("The grant list in the repository variable %s, signed with ledger-key-previous, could not be "+
			"signed anew with ledger-key; the next run tries again. Keep ledger-key-previous until it is.", ledger.GrantsName), err)
		return
	}
	r.grants = &ledger.GrantState{Known: true, Text: signed}
	res.writes = append(res.writes, fmt.Sprintf("wrote the grant list %s (%d grants, signed anew with ledger-key)", ledger.GrantsName, len(list.Grants)))
}

// grantNote reports a grant list that could not be written.
func (r *runner) grantNote(res *applied, note string, err error) {
	res.notes = append(res.notes, note)
	r.log.infof("gns-guard: warning: %s", note)
	if err != nil {
		r.log.untrusted("gns-guard: warning: grant list write failed: " + err.Error())
	}
}

// grantedTokens writes the tokens of grants.
func grantedTokens(gs []ledger.Grant) string {
	return fmt.Sprintf("%d tokens", ledger.Sum(gs))
}
