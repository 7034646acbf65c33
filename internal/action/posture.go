package action

import (
	"context"
	"errors"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/posture"
)

// postureHint unlocks what only the owner may read.
const postureHint = "give the guard the admin-token input"

// postureRead is the one check standing for a failed read.
const postureRead = "posture.read"

// checkPosture sets the posture this run reports and records
// (docs/ledger.md#the-posture): the ledger's stamp at this commit, else
// doctor's judgement of facts read now. A refused read is a check not made;
// a failed one is said and tried again next run. Neither fails the run.
func (r *runner) checkPosture(ctx context.Context, s *live.Snapshot) {
	if r.postureDone {
		return
	}
	r.postureDone = true
	commit := r.o.Getenv("GITHUB_SHA")
	st := r.reader.PostureStamped(s, commit)
	switch {
	case st != nil && !st.Fresh(commit, r.serverTime()):
		r.log.infof("gns-guard: the posture the ledger recorded for commit %s is older than %s: judged again", short(commit), ledger.PostureMaxAge)
	case st != nil && r.knowsActors(ctx, s, st):
		r.posture = st
		r.log.infof("gns-guard: posture as the ledger recorded it for commit %s: %d check(s) do not hold", short(commit), len(st.Broken))
		return
	}
	r.judgePosture(ctx, commit, st)
	if r.posture != nil {
		// The accounts acting now were judged with everything else: an
		// account the lists did not name has no role there, and one whose
		// access the tokens may not read is said already. Learnt now, the
		// next event they cause costs no request (docs/contract.md#6-reading-the-issue-cheaply).
		r.posture.Learn(r.actors(s)...)
	}
}

// actors are the accounts acting on the issue in this run: the event's
// sender and the label changes' actors, the guard and the repository's
// owner left out.
func (r *runner) actors(s *live.Snapshot) []string {
	var out []string
	add := func(a string) {
		if a != "" && a != s.Guard && a != issues.ActionsUser && a != s.Issue.RepoOwner {
			out = append(out, a)
		}
	}
	add(r.event.Sender)
	for _, le := range s.Labels {
		add(le.Actor)
	}
	return out
}

// judgePosture replaces old (nil: none), keeping its checked accounts.
func (r *runner) judgePosture(ctx context.Context, commit string, old *ledger.PostureStamp) {
	var admin port.PostureAdmin
	if r.set.AdminToken != "" {
		admin = r.admin
	}
	token, owner := r.requestsMade()
	checks, known, err := r.readPosture(ctx, r.forge, admin)
	token2, owner2 := r.requestsMade()
	spent := token2 - token + owner2 - owner
	switch {
	case err == nil:
		r.posture = ledger.NewPostureStamp(commit, checks)
		r.posture.Judged = r.serverTime().Unix()
		if old != nil {
			r.posture.Learn(old.Known...)
		}
		r.posture.Learn(known...)
		r.log.infof("gns-guard: posture judged for commit %s: %d of %d check(s) do not hold (read with %d request(s), %d of them with "+
			"admin-token)", short(commit), len(r.posture.Broken), len(checks), spent, owner2-owner)
	case refusedRead(err):
		r.posture = ledger.NewPostureStamp(commit, []posture.Check{{ID: postureRead, Why: posture.CouldNotCheck +
			"the guard's tokens may not read the repository's posture (" + err.Error() + "); " + postureHint}})
		r.posture.Judged = r.serverTime().Unix()
		r.log.infof("gns-guard: posture: a read was refused (after %d request(s)): said once, as could not check", spent)
	default:
		// Not the tokens' rights: the next run retries (no commit).
		r.posture = ledger.NewPostureStamp("", []posture.Check{{ID: postureRead, Why: posture.CouldNotCheck + "reading the repository's " +
			"posture failed (" + err.Error() + "); the next run tries again"}})
		r.log.infof("gns-guard: posture: the read failed (after %d request(s)); the next run tries again", spent)
	}
}

// readPosture reads the repository's default branch and its posture, and
// judges it with the run's settings (budget-admins, ledger-public-key):
// the checks, and the accounts the facts name.
func (r *runner) readPosture(ctx context.Context, src port.PostureReader, admin port.PostureAdmin) ([]posture.Check, []string, error) {
	info, err := src.Repository(ctx)
	if err != nil {
		return nil, nil, err
	}
	f, err := src.PostureFacts(ctx, admin, info.DefaultBranch, postureHint)
	if err != nil {
		return nil, nil, err
	}
	f.BudgetAdmins, f.PublicKey = r.cfg.BudgetAdmins, r.set.LedgerPublicKey
	known := append([]string{f.Owner}, f.SiteAdmins...)
	known = append(known, f.BudgetAdmins...)
	for _, c := range f.Collaborators {
		known = append(known, c.Login)
	}
	known = append(known, f.Listed...)
	for _, t := range f.Teams {
		known = append(known, t.Members...)
	}
	return posture.Judge(f), known, nil
}

// maxActorChecks bounds the accounts one run checks.
const maxActorChecks = 5

// knowsActors checks the accounts acting on the issue — the event's
// sender, the label changes' actors — that stamp st does not know: one
// request each, with admin-token (docs/operations.md). An account that
// can read only is learnt into the stamp; one with more, or one that
// cannot be checked, has the posture judged again (false).
func (r *runner) knowsActors(ctx context.Context, s *live.Snapshot, st *ledger.PostureStamp) bool {
	checked := 0
	for _, a := range r.actors(s) {
		if st.Knows(a) || checked == maxActorChecks {
			continue
		}
		checked++
		st.Learn(a)
		perm, err := r.admin.Permission(ctx, a)
		if err != nil {
			// The tokens may not read it; the stamp says so already.
			r.log.infof("gns-guard: %s acts on the issue; the posture did not know the account and its access could not be read", a)
			continue
		}
		r.log.infof("gns-guard: %s acts on the issue and the posture did not know the account (%s access)", a, perm)
		if perm != "read" && perm != "none" {
			return false
		}
	}
	return true
}

// requestsMade counts the token's requests and admin-token's.
func (r *runner) requestsMade() (token, admin int64) {
	if r.admin != r.forge {
		admin = r.admin.Requests()
	}
	return r.forge.Requests(), admin
}

// refusedRead says a read was refused for want of rights.
func refusedRead(err error) bool {
	return errors.Is(err, issues.ErrForbidden) || errors.Is(err, issues.ErrUnauthorized) || errors.Is(err, issues.ErrNotFound)
}

// short is a commit's short form, "(unknown)" for none.
func short(commit string) string {
	if commit == "" {
		return "(unknown)"
	}
	return commit[:min(len(commit), 12)]
}
