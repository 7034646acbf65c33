package action

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/exit"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// maxAttempts bounds the re-reads after a compare-and-swap conflict.
const maxAttempts = 4

// snapshot is what one read of the issue returned.
type snapshot struct {
	issue  guard.Issue
	recent guard.CommentPage
	files  []string
	// status is the guard's sticky status comment, which holds its
	// ledger; older are the comments read further back to find it, and
	// labels every label event of the timeline entries read.
	status *guard.Comment
	older  []guard.Comment
	labels []guard.LabelEvent
	// unreached says no status comment was found and the search stopped
	// before the first timeline entry.
	unreached bool
	// admins are the answers to the decision's AskAdmin, kept across
	// re-reads of one run.
	admins map[string]bool
}

// cycle reads, decides and applies, re-reading when the body changed
// under it, and reports.
func (r *runner) cycle(ctx context.Context) error {
	cfg := r.set.Config
	var plan *guard.Plan
	var snap snapshot
	var res applied
	var unlanded []int64 // archives posted in an attempt whose body write lost a race
	for attempt := 1; ; attempt++ {
		var err error
		snap, err = r.read(ctx, attempt == 1)
		if err != nil {
			return err
		}
		if snap.issue.Number == 0 { // not governed: nothing more was read
			plan = &guard.Plan{Skipped: "the issue has no checkpoint block and no cascade:: or budget:: label: it is not governed"}
			break
		}
		if len(unlanded) > 0 {
			if err := r.withdraw(ctx, snap, unlanded); err != nil {
				return err
			}
			unlanded = nil
		}
		if r.stale(snap) && attempt < maxAttempts {
			// The issue was read before a concurrent run's body write, the
			// timeline after its ledger: deciding on the two would mix them.
			r.log.infof("gns-guard: the ledger is newer than the body read; reading it again (attempt %d of %d)", attempt+1, maxAttempts)
			continue
		}
		if r.ownEvent() {
			r.log.infof("gns-guard: skipped: the event was caused by the guard's own user %s (no loops)", r.self)
			r.gh.SetOutput("result", "skipped")
			return nil
		}
		if plan, err = r.decide(ctx, &snap); err != nil {
			return err
		}
		if cfg.DryRun {
			res = r.dryRun(snap, plan)
			break
		}
		res, err = r.apply(ctx, snap, plan)
		if errors.Is(err, guard.ErrConflict) && attempt < maxAttempts {
			r.log.infof("gns-guard: the issue body changed while the guard worked; reading it again (attempt %d of %d)", attempt+1, maxAttempts)
			for _, c := range res.posted {
				if strings.Contains(c.Body, guard.ArchiveMarkerPrefix(snap.issue.Number)) {
					unlanded = append(unlanded, c.ID)
				}
			}
			continue
		}
		if err != nil {
			// A forge error is classified already; a conflict that
			// outlived every attempt is a failure to run too.
			return cannotRun(err)
		}
		break
	}
	r.report(snap, plan, res)
	if plan.Failed(cfg) {
		return exit.ErrViolations
	}
	return nil
}

// read reads the issue live, and, when it is governed, its recent comments
// (and a pull request's files). A clean pass costs two requests.
func (r *runner) read(ctx context.Context, first bool) (snapshot, error) {
	var s snapshot
	issue, err := r.forge.Issue(ctx, r.event.Number)
	if err != nil {
		return s, r.forgeError(fmt.Sprintf("read issue #%d", r.event.Number), err)
	}
	need := r.set.Config.RecentWindow()
	if r.event.Name == "pull_request" {
		files, err := r.forge.PullFiles(ctx, issue.Number)
		if err != nil {
			return s, r.forgeError(fmt.Sprintf("list the files of pull request #%d", issue.Number), err)
		}
		// The recent comments hold the status comment to update or resolve.
		page, err := r.forge.RecentComments(ctx, issue, need)
		if err != nil {
			return s, r.forgeError(fmt.Sprintf("read the recent comments of pull request #%d", issue.Number), err)
		}
		s.issue, s.files, s.recent = issue, files, page
		if err := r.learnSelf(ctx, s); err != nil {
			return s, err
		}
		return s, r.findStatus(ctx, &s)
	}
	if !guard.IsGoverned(issue, r.set.Config) {
		return s, nil
	}
	page, err := r.forge.RecentComments(ctx, issue, need)
	if err != nil {
		return s, r.forgeError(fmt.Sprintf("read the recent comments of issue #%d", issue.Number), err)
	}
	s.issue, s.recent = issue, page
	if err := r.learnSelf(ctx, s); err != nil {
		return s, err
	}
	return s, r.findStatus(ctx, &s)
}

// decide runs the decision, answering the questions it asks of the server
// (whether a user is a repository admin) and deciding again, a bounded
// number of times.
func (r *runner) decide(ctx context.Context, s *snapshot) (*guard.Plan, error) {
	if s.admins == nil {
		s.admins = map[string]bool{}
	}
	for asked := 0; ; asked++ {
		in, cancel := r.input(*s)
		plan := guard.Decide(in)
		cancel()
		user := plan.AskAdmin
		if user == "" || asked == maxAdminQuestions {
			return plan, nil
		}
		admin, err := r.admin.IsRepoAdmin(ctx, user)
		switch {
		case errors.Is(err, guard.ErrForbidden) || errors.Is(err, guard.ErrNotFound):
			// Only a repository admin may read permissions: without
			// admin-token the answer is no, and the status comment says why.
			r.notes = append(r.notes, fmt.Sprintf("Whether %s is a repository admin could not be checked (the token may not read permissions): set budget-admins, or admin-token, so approvals can be recognized.", quoteLogin(user)))
			admin = false
		case err != nil:
			return nil, r.forgeError("check the permission of "+user, err)
		}
		s.admins[user] = admin
	}
}

// maxAdminQuestions bounds the permission look-ups of one decision.
const maxAdminQuestions = 3

// findStatus finds the guard's sticky status comment: its own comment
// with the status marker, never one that carries an archive marker (an
// archive is never taken for it, so never edited), the newest if several (a
// move cut short leaves two) — of those read, the newest whose ledger record
// verifies, when one does. When the recent comments lack it, it reads
// further back, a bounded number of pages, collecting the comments and
// label events on the way.
func (r *runner) findStatus(ctx context.Context, s *snapshot) error {
	n := s.issue.Number
	mine := func(c guard.Comment) bool { return c.Author == r.self && hasMarker(guard.StatusMarker(n))(c) }
	s.labels = s.recent.Labels
	if c := r.pickStatus(s.recent.Comments, mine, n); c != nil {
		s.status = c
		return nil
	}
	start := s.recent.Start
	for pages := 0; start > 0 && pages < maxStatusPages; pages++ {
		page, err := r.forge.CommentsBefore(ctx, s.issue.Number, start)
		if err != nil {
			return r.forgeError("look for the status comment", err)
		}
		s.older = append(page.Comments, s.older...)
		s.labels = append(page.Labels, s.labels...)
		if c := r.pickStatus(page.Comments, mine, n); c != nil {
			s.status = c
			return nil
		}
		start = page.Start
	}
	s.unreached = start > 0
	return nil
}

// pickStatus returns the newest of comments that mine accepts whose ledger
// record verifies, or else the newest it accepts, or nil.
func (r *runner) pickStatus(comments []guard.Comment, mine func(guard.Comment) bool, n int64) *guard.Comment {
	var newest *guard.Comment
	for i := len(comments) - 1; i >= 0; i-- {
		c := &comments[i]
		if !mine(*c) {
			continue
		}
		if newest == nil {
			newest = c
		}
		if l, _ := guard.ReadLedger(c, n, r.set.Config.LedgerKey); l != nil {
			return c
		}
	}
	return newest
}

// maxStatusPages bounds the search for a status comment beyond the recent
// comments (50 timeline entries a page): it happens when a burst of
// comments buried it, and on the first run on an issue.
const maxStatusPages = 20

// quoteLogin shows a login from the event or the timeline in a note.
func quoteLogin(s string) string { return strconv.Quote(s) }

// stale reports whether the ledger the run found records a body newer than
// the body it read: the issue is read first and the timeline second, and a
// concurrent run may have written both in between.
func (r *runner) stale(s snapshot) bool {
	if s.status == nil || s.issue.NoCAS {
		return false
	}
	l, _ := guard.ReadLedger(s.status, s.issue.Number, r.set.Config.LedgerKey)
	return l != nil && l.Baseline && l.ContentVersion > s.issue.ContentVersion
}

// withdraw deletes the archives this run posted in an attempt whose body
// write lost a race, when they are redundant now: every entry they hold has
// left the body and is held by another of the guard's archives (a
// concurrent run archived them and wrote its body). One that a concurrent
// run adopted, or whose entries the body still holds, stays: the next plan
// reuses or replaces it.
func (r *runner) withdraw(ctx context.Context, s snapshot, ids []int64) error {
	n := s.issue.Number
	var body []prune.Entry
	if res := checkpoint.Parse(s.issue.Body, checkpoint.Options{Issue: n, MaxBytes: r.set.Config.MaxCheckpointBytes}); res.Checkpoint != nil {
		body = prune.FromCheckpoint(res.Checkpoint.Entries())
	}
	archived := map[int64][]prune.Entry{}
	for _, c := range append(slices.Clone(s.older), s.recent.Comments...) {
		if c.Author != r.self || !strings.Contains(c.Body, guard.ArchiveMarkerPrefix(n)) {
			continue
		}
		if a, err := prune.ParseArchive(c.Body); err == nil {
			archived[c.ID] = a.Entries
		}
	}
	for _, id := range ids {
		mine, ok := archived[id]
		if !ok {
			continue // gone already
		}
		redundant := len(mine) > 0
		for _, e := range mine {
			elsewhere := false
			for other, es := range archived {
				if other != id && slices.Contains(es, e) {
					elsewhere = true
					break
				}
			}
			if slices.Contains(body, e) || !elsewhere {
				redundant = false
				break
			}
		}
		if !redundant {
			continue
		}
		if err := r.forge.DeleteComment(ctx, id); err != nil && !errors.Is(err, guard.ErrNotFound) {
			return r.forgeError("delete an archive whose body write lost a race", err)
		}
		r.log.infof("gns-guard: deleted archive comment %d: a concurrent run archived its entries and wrote the body first", id)
	}
	return nil
}
