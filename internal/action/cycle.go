package action

import (
	"context"
	"errors"
	"fmt"

	"github.com/gns-guard/gns-guard/internal/exit"
	"github.com/gns-guard/gns-guard/internal/guard"
)

// maxAttempts bounds the re-reads after a compare-and-swap conflict.
const maxAttempts = 4

// snapshot is what one read of the issue returned.
type snapshot struct {
	issue  guard.Issue
	recent guard.CommentPage
	files  []string
}

// cycle reads, decides and applies, re-reading when the body changed
// under it, and reports.
func (r *runner) cycle(ctx context.Context) error {
	cfg := r.set.Config
	var plan *guard.Plan
	var snap snapshot
	var res applied
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
		in, cancel := r.input(snap)
		plan = guard.Decide(in)
		cancel()
		if cfg.DryRun {
			res = r.dryRun(ctx, snap, plan)
			break
		}
		res, err = r.apply(ctx, snap, plan)
		if errors.Is(err, guard.ErrConflict) && attempt < maxAttempts {
			r.log.infof("gns-guard: the issue body changed while the guard worked; reading it again (attempt %d of %d)", attempt+1, maxAttempts)
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
		return s, nil
	}
	if !guard.IsGoverned(issue, r.set.Config) {
		return s, nil
	}
	page, err := r.forge.RecentComments(ctx, issue, need)
	if err != nil {
		return s, r.forgeError(fmt.Sprintf("read the recent comments of issue #%d", issue.Number), err)
	}
	s.issue, s.recent = issue, page
	return s, nil
}
