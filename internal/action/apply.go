package action

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// applied is what applying a plan did.
type applied struct {
	notes      []string // facts for the status comment and summary
	archiveIDs []int64
	pruned     bool
	writes     []string        // one line per write made (or, in a dry run, planned)
	posted     []guard.Comment // comments this run posted
}

// lockRefused is the note left when the lock was refused; while it stands
// in the status comment and no admin-token is set, the lock is not retried.
const lockRefused = "The issue could not be locked: the token may not lock issues (HTTP 403; locking needs repository admin). Set the admin-token input to a token with admin rights on this repository."

// apply makes the plan's writes, in an order that loses nothing if the run
// dies half-way: archive, then body (compare-and-swap), then labels, lock,
// comments, and the status comment last.
func (r *runner) apply(ctx context.Context, s snapshot, p *guard.Plan) (applied, error) {
	var res applied
	if !p.Governed {
		return res, nil
	}
	n := s.issue.Number
	if p.Prune != nil {
		if err := r.applyPrune(ctx, s, p.Prune, &res); err != nil {
			return res, err
		}
	}
	if len(p.AddLabels) > 0 {
		if err := r.forge.AddLabels(ctx, n, p.AddLabels, r.set.Config.Labels.Specs()); err != nil {
			return res, r.forgeError("add labels "+strings.Join(p.AddLabels, ", "), err)
		}
		res.writes = append(res.writes, guard.LabelsWrite(p.AddLabels).Done(""))
	}
	for _, l := range p.RemoveLabels {
		if err := r.forge.RemoveLabel(ctx, n, l); err != nil && !errors.Is(err, guard.ErrNotFound) {
			return res, r.forgeError("remove label "+l.Name, err)
		}
		res.writes = append(res.writes, guard.RemoveLabelWrite(l).Done(""))
	}
	status, statusErr := r.findStatus(ctx, s, p)
	if statusErr != nil {
		return res, statusErr
	}
	if p.Lock != "" {
		r.applyLock(ctx, n, p.Lock, status, &res)
	}
	if p.Recovery != "" {
		if err := r.createOnce(ctx, s, p.Recovery, hasMarker(guard.RecoveryMarker(n)), &res, guard.Write{Kind: guard.PostRecovery}); err != nil {
			return res, err
		}
	}
	if p.Digest != "" {
		if err := r.createOnce(ctx, s, p.Digest, sameBody(p.Digest), &res, guard.Write{Kind: guard.PostDigest}); err != nil {
			return res, err
		}
	}
	return res, r.applyStatus(ctx, s, p, status, &res)
}

// applyPrune posts the archive first, then patches the body with
// compare-and-swap. A re-run finds its own archive (same hash) and posts no
// second one; an archive whose entries are all still in the body was never
// followed by its patch, so a re-plan replaces it.
func (r *runner) applyPrune(ctx context.Context, s snapshot, pr *prune.Result, res *applied) error {
	n := s.issue.Number
	have := map[int]int64{} // part -> lowest id of our archive comments with this hash
	for _, c := range s.recent.Comments {
		if c.Author != r.self || !strings.Contains(c.Body, guard.ArchiveMarkerPrefix(n)) {
			continue
		}
		a, err := prune.ParseArchive(c.Body)
		if err != nil {
			continue
		}
		switch {
		case a.SHA256 == pr.SHA256:
			if id, ok := have[a.Part]; !ok || c.ID < id {
				have[a.Part] = c.ID
			}
		case pr.Supersedes(a):
			// Posted by a run that never patched the body: its entries are
			// all still in the checkpoint. Replace it, or history doubles.
			if err := r.forge.DeleteComment(ctx, c.ID); err != nil && !errors.Is(err, guard.ErrNotFound) {
				return r.forgeError("delete a stale archive comment", err)
			}
			res.writes = append(res.writes, fmt.Sprintf("deleted stale archive comment %d", c.ID))
		}
	}
	posted := false
	for i, body := range pr.Archives {
		part := i + 1
		if _, ok := have[part]; ok {
			continue
		}
		c, err := r.forge.CreateComment(ctx, n, body)
		if err != nil {
			return r.forgeError(fmt.Sprintf("post archive part %d/%d", part, len(pr.Archives)), err)
		}
		have[part] = c.ID
		posted = true
		res.posted = append(res.posted, c)
		res.writes = append(res.writes, guard.ArchiveWrite(part, len(pr.Archives), body).Done(fmt.Sprintf("comment %d", c.ID)))
	}
	if posted {
		// Concurrent runs may have posted the same archive: the lowest id wins.
		page, err := r.forge.RecentComments(ctx, s.issue, r.set.Config.RecentWindow()+len(pr.Archives))
		if err != nil {
			return r.forgeError("re-read the recent comments", err)
		}
		for part := 1; part <= len(pr.Archives); part++ {
			id, err := r.settle(ctx, page.Comments, func(c guard.Comment) bool {
				a, err := prune.ParseArchive(c.Body)
				return err == nil && a.SHA256 == pr.SHA256 && a.Part == part
			}, res)
			if err != nil {
				return err
			}
			if id != 0 {
				have[part] = id
			}
		}
	}
	if _, err := r.forge.EditBody(ctx, n, pr.Body, s.issue.ContentVersion); err != nil {
		if errors.Is(err, guard.ErrConflict) {
			return err
		}
		return r.forgeError("write the pruned checkpoint", err)
	}
	for part := 1; part <= len(pr.Archives); part++ {
		res.archiveIDs = append(res.archiveIDs, have[part])
	}
	res.pruned = true
	res.writes = append(res.writes, guard.PatchWrite(pr).Done(""))
	return nil
}

// settle deletes the guard's own duplicates among comments that match:
// the lowest id stays, and is returned (0 when none matches).
func (r *runner) settle(ctx context.Context, comments []guard.Comment, match func(guard.Comment) bool, res *applied) (int64, error) {
	var ids []int64
	for _, c := range comments {
		if c.Author == r.self && match(c) {
			ids = append(ids, c.ID)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	slices.Sort(ids)
	for _, id := range ids[1:] {
		if err := r.forge.DeleteComment(ctx, id); err != nil && !errors.Is(err, guard.ErrNotFound) {
			return 0, r.forgeError("delete a duplicate comment", err)
		}
		res.writes = append(res.writes, fmt.Sprintf("deleted duplicate comment %d (a concurrent run posted the same)", id))
	}
	return ids[0], nil
}

// createOnce posts body unless one of the guard's own recent comments
// matches already, then deletes the duplicates concurrent runs posted.
func (r *runner) createOnce(ctx context.Context, s snapshot, body string, same func(guard.Comment) bool, res *applied, w guard.Write) error {
	for _, c := range s.recent.Comments {
		if c.Author == r.self && same(c) {
			return nil
		}
	}
	c, err := r.forge.CreateComment(ctx, s.issue.Number, body)
	if err != nil {
		return r.forgeError(w.Planned(), err)
	}
	res.posted = append(res.posted, c)
	res.writes = append(res.writes, w.Done(fmt.Sprintf("comment %d", c.ID)))
	page, err := r.forge.RecentComments(ctx, s.issue, r.set.Config.RecentWindow()+1)
	if err != nil {
		return r.forgeError("re-read the recent comments", err)
	}
	_, err = r.settle(ctx, page.Comments, same, res)
	return err
}

// hasMarker matches comments that carry marker.
func hasMarker(marker string) func(guard.Comment) bool {
	return func(c guard.Comment) bool { return strings.Contains(c.Body, marker) }
}

// sameBody matches comments whose body is body.
func sameBody(body string) func(guard.Comment) bool {
	return func(c guard.Comment) bool { return strings.TrimSpace(c.Body) == strings.TrimSpace(body) }
}

// applyLock locks the issue, with the admin token when one is set. A refused
// lock is reported, never fatal; without an admin token it is tried once.
func (r *runner) applyLock(ctx context.Context, n int64, reason string, status *guard.Comment, res *applied) {
	if r.set.AdminToken == "" && status != nil && strings.Contains(status.Body, lockRefused) {
		res.notes = append(res.notes, lockRefused)
		return
	}
	err := r.admin.Lock(ctx, n, reason)
	switch {
	case err == nil:
		res.writes = append(res.writes, guard.LockWrite(reason).Done(""))
	case errors.Is(err, guard.ErrForbidden):
		res.notes = append(res.notes, lockRefused)
		r.log.infof("gns-guard: warning: %s", lockRefused)
	default:
		note := "The issue could not be locked: the server answered an error. The next run tries again."
		res.notes = append(res.notes, note)
		r.log.untrusted("gns-guard: warning: lock failed: " + err.Error())
	}
}

// findStatus finds the sticky status comment: the guard's own comment with
// the status marker. It looks further back than the recent comments only
// when the plan has something to say or to clear.
func (r *runner) findStatus(ctx context.Context, s snapshot, p *guard.Plan) (*guard.Comment, error) {
	marker := guard.StatusMarker(s.issue.Number)
	var found *guard.Comment
	for i, c := range s.recent.Comments {
		if c.Author == r.self && strings.Contains(c.Body, marker) && (found == nil || c.ID < found.ID) {
			found = &s.recent.Comments[i]
		}
	}
	if found != nil || (p.Resolved && len(p.RemoveLabels) == 0) {
		return found, nil
	}
	start := s.recent.Start
	for pages := 0; start > 0 && pages < maxStatusPages; pages++ {
		page, err := r.forge.CommentsBefore(ctx, s.issue.Number, start)
		if err != nil {
			return nil, r.forgeError("look for the status comment", err)
		}
		for i, c := range page.Comments {
			if c.Author == r.self && strings.Contains(c.Body, marker) {
				return &page.Comments[i], nil
			}
		}
		start = page.Start
	}
	return nil, nil
}

// maxStatusPages bounds the search for an old status comment (50 timeline
// entries a page).
const maxStatusPages = 20

// applyStatus creates, updates or resolves the sticky status comment, and
// writes nothing when it already says what it should.
func (r *runner) applyStatus(ctx context.Context, s snapshot, p *guard.Plan, existing *guard.Comment, res *applied) error {
	body := r.settledStatus(s, p, existing, *res)
	w, ok := guard.StatusWrite(existing, body, p.Resolved)
	switch {
	case !ok:
		return nil
	case w.Kind == guard.UpdateStatus:
		if _, err := r.forge.EditComment(ctx, existing.ID, body); err != nil {
			return r.forgeError(w.Planned(), err)
		}
		res.writes = append(res.writes, w.Done(""))
		return nil
	}
	return r.createOnce(ctx, s, body, hasMarker(guard.StatusMarker(s.issue.Number)), res, w)
}
