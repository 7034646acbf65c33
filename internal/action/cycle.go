package action

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/issuetx"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
)

// cycle reads, decides and applies, rereading when the body moved, then
// reports.
func (r *runner) cycle(ctx context.Context) error {
	var c cycleState
	var next outcome
	err := issuetx.Run(ctx, func(ctx context.Context, a issuetx.Attempt) (err error) {
		next, err = r.attempt(ctx, &c, a)
		return err
	}, func(next issuetx.Attempt, why error) {
		if errors.Is(why, issues.ErrConflict) {
			why = errors.New("the issue body changed while the guard worked")
		}
		r.log.infof("gns-guard: %s; reading it again (attempt %d of %d)", why, next.N, issuetx.Attempts)
	})
	if errors.Is(err, issues.ErrConflict) {
		return applyError(err) // a lost race that outlived every attempt
	}
	if err != nil || next == endRun {
		return err
	}
	r.report(c.plan, c.res)
	if c.plan.Failed(r.cfg) {
		return exitcode.ErrViolations
	}
	return nil
}

// cycleState carries from one attempt to the next.
type cycleState struct {
	plan     *guard.Plan
	res      applied
	unlanded []int64 // archives posted in an attempt whose body write lost a race
}

// outcome is what an attempt leaves to do; issuetx.Again means read again.
type outcome int

const (
	reportPlan outcome = iota // report the plan decided (and applied)
	endRun                    // end the run: it has nothing to report
)

// applyError keeps forge errors as classified; any other cannot run.
func applyError(err error) error {
	var ce *exitcode.CannotRunError
	if errors.As(err, &ce) {
		return err
	}
	return cannotRun(err)
}

// attempt reads the issue, withdraws what an earlier attempt posted in
// vain, and decides and applies, unless the read must be made again or
// the event is the guard's own.
func (r *runner) attempt(ctx context.Context, c *cycleState, a issuetx.Attempt) (outcome, error) {
	s, err := r.read(ctx, a.N == 1)
	if err != nil {
		return endRun, err
	}
	r.readAt = r.serverTime()
	if !s.Governed {
		c.plan = &guard.Plan{Skipped: "the issue has no checkpoint block and no cascade:: or budget:: label: it is not governed"}
		return reportPlan, nil
	}
	r.notes = appendNew(r.notes, s.Notes...)
	switch {
	case a.N > 1 || !s.Followed():
	case s.Hinted():
		r.log.infof("gns-guard: read issue #%d through the read hint in its checkpoint: the comments updated since it, not the timeline", s.Issue.Number)
	default:
		r.log.infof("gns-guard: read issue #%d through its anchor %s: the comments updated since it, not the timeline", s.Issue.Number,
			ledger.AnchorName(s.Issue.Number))
	}
	in := r.input(s)
	if len(c.unlanded) > 0 {
		gone, err := r.withdraw(ctx, in, c.unlanded)
		if err != nil {
			return endRun, err
		}
		c.unlanded = nil
		if len(gone) > 0 {
			s.Drop(gone)
			in = r.input(s)
		}
	}
	if stale(s, r.cfg) && !a.Last() {
		// The issue predates a concurrent body write the timeline shows: do
		// not mix them.
		return endRun, issuetx.Stale("the ledger is newer than the body read")
	}
	if r.ownEvent(s) {
		return endRun, nil
	}
	r.checkPosture(ctx, s)
	in.Posture = r.posture
	return r.decideAndApply(ctx, c, in, s, a)
}

// ownEvent skips an event the guard's own user caused with a personal
// token, so runs do not loop. A re-run is never skipped: anyone may re-run
// after changing the issue (docs/contract.md#4b-the-trusted-ledger). Nor is
// a pull request's: its run sets the required commit status. Judging again
// writes nothing new, so no further run starts.
func (r *runner) ownEvent(s *live.Snapshot) bool {
	if r.event.Sender == "" || r.event.Sender != s.Guard || s.Guard == issues.ActionsUser || r.event.IsPull {
		return false
	}
	if n, err := strconv.Atoi(r.o.Getenv(RunAttemptEnv)); err == nil && n > 1 {
		r.log.infof("gns-guard: the event was caused by the guard's own user %s, but this is attempt %d of the run (a re-run): judged", s.Guard, n)
		return false
	}
	r.log.infof("gns-guard: skipped: the event was caused by the guard's own user %s (no loops)", s.Guard)
	r.kit.output("result", "skipped")
	return true
}

// decideAndApply decides on the read and applies the plan (or, in a dry
// run, lists its writes). A body write that lost a race reads again while
// attempts are left, and keeps the archives it posted for the next attempt
// to withdraw.
func (r *runner) decideAndApply(ctx context.Context, c *cycleState, in guard.Input, s *live.Snapshot, a issuetx.Attempt) (outcome, error) {
	in.Grants = r.grantState(ctx)
	if r.pins == nil {
		st := r.pinState(ctx)
		r.pins = &st
	}
	in.Pins = *r.pins
	in.Meter = r.meterStatement(ctx, s)
	r.notes = appendNew(r.notes, r.budgetNotes()...)
	if r.reader.Anchors.Store == nil {
		r.notes = appendNew(r.notes, noAdminPins)
	}
	plan, notes, err := r.reader.Decide(ctx, in)
	if err == nil {
		var more []string
		plan, more, err = r.regrant(ctx, &in, plan)
		notes = append(notes, more...)
	}
	c.plan = plan
	if err != nil {
		return endRun, err
	}
	if plan.ChainForked && !a.Last() {
		return endRun, issuetx.Stale("two of the guard's archives continue the history differently (a concurrent run lost its body " +
			"write and withdraws its own)")
	}
	r.notes = appendNew(r.notes, notes...)
	if r.cfg.DryRun {
		c.res = r.dryRun(in, s, plan)
		return reportPlan, nil
	}
	c.res, err = r.apply(ctx, in, s, plan)
	if err == nil {
		r.writeGrants(ctx, in, plan, &c.res)
		r.signGrantsAnew(ctx, in, &c.res)
		r.writePins(ctx, in, c.res.added, &c.res)
	}
	if errors.Is(err, issues.ErrConflict) {
		// The next attempt withdraws archives the winning body makes
		// redundant.
		for _, cm := range c.res.posted {
			if strings.Contains(cm.Body, issues.ArchiveMarkerPrefix(s.Issue.Number)) {
				c.unlanded = append(c.unlanded, cm.ID)
			}
		}
		return endRun, err
	}
	if err != nil {
		return endRun, applyError(err)
	}
	return reportPlan, nil
}

// read reads the issue through the one reader and, on the first read,
// resolves the configuration it is judged with (the repository's file may
// ask for more of the last comments than were read).
func (r *runner) read(ctx context.Context, first bool) (*live.Snapshot, error) {
	s, err := r.reader.Read(ctx, r.event.Number, live.ReadOptions{Window: r.cfg.RecentWindow(), Pull: r.event.IsPull})
	if err != nil || !s.Governed {
		return s, err
	}
	if first {
		if err := r.configureFor(ctx, s); err != nil {
			return nil, err
		}
	}
	return s, r.reader.More(ctx, s, r.cfg.RecentWindow())
}

// input is the decision input of a read.
func (r *runner) input(s *live.Snapshot) guard.Input {
	in := s.Input(r.cfg, r.event, r.repo, r.o.Now(), r.counter)
	in.ConfigStamp, in.PullSettings = r.stamp, r.pullSettings
	in.Records = true
	return in
}

// stale reports whether the ledger the run found records a body newer than
// the body it read: the issue is read first and the timeline second, and a
// concurrent run may have written both in between.
func stale(s *live.Snapshot, cfg config.Config) bool {
	if s.Status == nil || s.Issue.NoCAS {
		return false
	}
	l, _ := s.RecordOf(s.Status, ledger.ConfigKeys(cfg))
	return l != nil && l.Baseline && l.ContentVersion > s.Issue.ContentVersion
}

// RunAttemptEnv is 1, plus one for every re-run.
const RunAttemptEnv = "GITHUB_RUN_ATTEMPT"

// withdraw deletes the archives this run posted in an attempt whose body
// write lost a race, when the decision core finds them redundant now, and
// returns the ids it deleted.
func (r *runner) withdraw(ctx context.Context, in guard.Input, ids []int64) ([]int64, error) {
	in, cancel := live.Deadline(in)
	defer cancel()
	var gone []int64
	for _, id := range guard.Redundant(in, ids) {
		if err := r.forge.DeleteComment(ctx, id); err != nil && !errors.Is(err, issues.ErrNotFound) {
			return gone, r.reader.Where.Error("delete an archive whose body write lost a race", err)
		}
		gone = append(gone, id)
		r.log.infof("gns-guard: deleted archive comment %d: a concurrent run archived its entries and wrote the body first", id)
	}
	return gone, nil
}

// appendNew appends the items of add that list lacks.
func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		if !slices.Contains(list, a) {
			list = append(list, a)
		}
	}
	return list
}
