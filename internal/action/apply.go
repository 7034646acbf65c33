package action

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

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

// noLock is the note left when the server has no issue lock endpoint.
const noLock = "The issue could not be locked: the server has no lock endpoint for issues (HTTP 404; Forgejo has none)."

// noCAS is the note left on a server whose issues carry no
// content_version: its body writes are last-write-wins.
const noCAS = "This server's issues carry no content_version (Forgejo, say), so the guard's body writes are not compare-and-swap: it re-reads the body right before and after each write, which narrows but cannot close the window in which an agent's edit could be lost."

// apply makes the plan's writes, in an order that loses nothing if the run
// dies half-way: archive, then body (compare-and-swap), then labels, lock,
// comments, and the status comment last.
func (r *runner) apply(ctx context.Context, s snapshot, p *guard.Plan) (applied, error) {
	res := applied{notes: slices.Clone(r.notes)}
	if !p.Governed {
		return res, nil
	}
	if s.issue.NoCAS {
		res.notes = append(res.notes, noCAS)
	}
	n := s.issue.Number
	if p.Ledger != nil && s.status == nil && len(p.Writes()) > 0 {
		// The first run on an issue writes its ledger before anything
		// else: a run cut short after posting an archive or setting a label
		// must not leave traces of the guard without a ledger, which the
		// next run would take for a deleted one.
		if err := r.placeholderStatus(ctx, &s, &res); err != nil {
			return res, err
		}
	}
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
	status := s.status
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
// compare-and-swap. A re-run finds its own archive and posts no second one:
// a part counts as posted only when one of the guard's own comments says
// exactly what the plan would post (the same entries, chain and signature),
// never for its marker or hash alone, which anyone can copy (`gns-guard
// prune` prints the hash). A comment that claims the planned archive's hash
// but says something else is an impostor: it is left alone, reported, and
// the real archive is posted. An archive whose entries are all still in the
// body was never followed by its patch, so a re-plan replaces it.
func (r *runner) applyPrune(ctx context.Context, s snapshot, pr *prune.Result, res *applied) error {
	n := s.issue.Number
	have := map[int]int64{} // part -> lowest id of our comments that are exactly this part
	var impostors []string
	for _, c := range s.recent.Comments {
		if !strings.Contains(c.Body, guard.ArchiveMarkerPrefix(n)) {
			continue
		}
		a, err := prune.ParseArchive(c.Body)
		if err != nil {
			continue
		}
		mine := c.Author == r.self
		switch {
		case a.SHA256 == pr.SHA256 && mine && a.Part <= len(pr.Archives) && samePart(c.Body, pr.Archives[a.Part-1]):
			if id, ok := have[a.Part]; !ok || c.ID < id {
				have[a.Part] = c.ID
			}
		case a.SHA256 == pr.SHA256:
			impostors = append(impostors, fmt.Sprintf("%d (by %s)", c.ID, quoteLogin(c.Author)))
		case mine && pr.Supersedes(a):
			// Posted by a run that never patched the body: its entries are
			// all still in the checkpoint. Replace it, or history doubles.
			if err := r.forge.DeleteComment(ctx, c.ID); err != nil && !errors.Is(err, guard.ErrNotFound) {
				return r.forgeError("delete a stale archive comment", err)
			}
			res.writes = append(res.writes, fmt.Sprintf("deleted stale archive comment %d", c.ID))
		}
	}
	if len(impostors) > 0 {
		note := fmt.Sprintf("Comment(s) %s carry the marker and hash of the archive this run posts but not its content (entries, chain or signature): they are not the guard's archive and were ignored; `gns-guard history` does not count them.", strings.Join(impostors, ", "))
		res.notes = append(res.notes, note)
		r.log.untrusted("gns-guard: warning: " + note)
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
			id, err := r.settle(ctx, page.Comments, func(c guard.Comment) bool { return samePart(c.Body, pr.Archives[part-1]) }, res)
			if err != nil {
				return err
			}
			if id != 0 {
				have[part] = id
			}
		}
	}
	if s.issue.NoCAS {
		if err := r.sameBody(ctx, n, s.issue.Body); err != nil {
			return err
		}
	}
	if _, err := r.forge.EditBody(ctx, n, pr.Body, s.issue.ContentVersion); err != nil {
		if errors.Is(err, guard.ErrConflict) {
			return err
		}
		return r.forgeError("write the pruned checkpoint", err)
	}
	if s.issue.NoCAS {
		if err := r.sameBody(ctx, n, pr.Body); err != nil {
			// Someone wrote after the guard: nothing of theirs was lost.
			r.log.infof("gns-guard: warning: the body changed right after the guard's write; the next run judges it")
		}
	}
	for part := 1; part <= len(pr.Archives); part++ {
		res.archiveIDs = append(res.archiveIDs, have[part])
	}
	res.pruned = true
	res.writes = append(res.writes, guard.PatchWrite(pr).Done(""))
	return nil
}

// samePart reports whether a comment's body is exactly the planned archive
// part (line endings and surrounding blanks aside).
func samePart(body, planned string) bool {
	norm := func(s string) string { return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n")) }
	return norm(body) == norm(planned)
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

// hasMarker matches comments that carry marker and are not archives: a
// marker added to an archive comment never makes it the status comment (or
// the recovery request), so the guard never edits nor deletes it.
func hasMarker(marker string) func(guard.Comment) bool {
	return func(c guard.Comment) bool { return strings.Contains(c.Body, marker) && !isArchive(c) }
}

// isArchive reports whether a comment carries an archive marker (of any
// issue): such a comment is never edited, and never taken for another
// kind of the guard's comments.
func isArchive(c guard.Comment) bool { return strings.Contains(c.Body, prune.MarkerPrefix) }

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
	case errors.Is(err, guard.ErrNotFound):
		// Forgejo has no issue lock endpoint: reported, never fatal.
		res.notes = append(res.notes, noLock)
		r.log.infof("gns-guard: warning: %s", noLock)
	default:
		note := "The issue could not be locked: the server answered an error. The next run tries again."
		res.notes = append(res.notes, note)
		r.log.untrusted("gns-guard: warning: lock failed: " + err.Error())
	}
}

// applyStatus creates, updates, resolves or moves the sticky status
// comment with the ledger record the plan carries, and writes nothing when
// it already says what it should.
func (r *runner) applyStatus(ctx context.Context, s snapshot, p *guard.Plan, existing *guard.Comment, res *applied) error {
	st := r.statusFor(s, p, existing, *res)
	if !st.write {
		return nil
	}
	n := s.issue.Number
	switch {
	case st.w.Kind == guard.UpdateStatus && isArchive(*existing):
		return fmt.Errorf("internal error: the status comment found (%d) is an archive comment, which is never edited", existing.ID)
	case st.w.Kind == guard.UpdateStatus:
		if _, err := r.forge.EditComment(ctx, existing.ID, st.body); err != nil {
			if errors.Is(err, guard.ErrUnreachable) {
				return r.forgeError(st.w.Planned(), err)
			}
			// Gitea answers the edit of a comment that a concurrent run
			// changed (or deleted) since it was read with 500 (or 404):
			// read it all again, as after a body conflict; an answer that
			// keeps failing still ends the run when the attempts are spent.
			return raced{r.forgeError(st.w.Planned(), err)}
		}
		res.writes = append(res.writes, st.w.Done(""))
		return nil
	case existing != nil: // a move: post anew at the end, then delete the old
		c, err := r.forge.CreateComment(ctx, n, st.body)
		if err != nil {
			return r.forgeError(st.w.Planned(), err)
		}
		res.posted = append(res.posted, c)
		res.writes = append(res.writes, st.w.Done(fmt.Sprintf("comment %d", c.ID)))
		for _, old := range append(s.older, s.recent.Comments...) {
			if old.ID != c.ID && old.Author == r.self && hasMarker(guard.StatusMarker(n))(old) {
				if err := r.forge.DeleteComment(ctx, old.ID); err != nil && !errors.Is(err, guard.ErrNotFound) {
					return r.forgeError("delete the old status comment", err)
				}
				res.writes = append(res.writes, fmt.Sprintf("deleted the old status comment %d", old.ID))
			}
		}
		return nil
	}
	return r.createOnce(ctx, s, st.body, hasMarker(guard.StatusMarker(n)), res, st.w)
}

// statusPlan is the status comment a run leaves.
type statusPlan struct {
	body  string
	w     guard.Write
	write bool
}

// statusFor renders the status comment this run leaves. The ledger record
// it carries is reused verbatim when the accepted state did not move and
// the comment would not change otherwise (a clean pass writes nothing);
// any write signs a fresh record, stamped with the server's clock, so an
// edit by anyone else shows as an updated_at the record does not explain.
// A status comment that has fallen so far back that the next run might not
// reach it is moved to the end.
func (r *runner) statusFor(s snapshot, p *guard.Plan, existing *guard.Comment, res applied) statusPlan {
	cfg := r.set.Config
	n := s.issue.Number
	moved := existing != nil && p.Ledger != nil && r.buried(s, existing, res)
	if p.Ledger != nil && existing != nil && !moved {
		if old, _ := guard.ReadLedger(existing, n, cfg.LedgerKey); old != nil && old.SameState(*p.Ledger) {
			body := r.settledStatus(s, p, existing, res, guard.LedgerLine(existing.Body), time.Unix(old.Written, 0))
			if strings.TrimSpace(body) == strings.TrimSpace(existing.Body) {
				return statusPlan{}
			}
		}
	}
	var record string
	written := r.forge.ServerTime()
	if written.IsZero() {
		written = r.o.Now()
	}
	if p.Ledger != nil {
		l := *p.Ledger
		l.Written = written.Unix()
		record = guard.EncodeLedger(l, cfg.LedgerKey)
	}
	if moved {
		body := r.settledStatusMoved(s, p, existing, res, record, written)
		return statusPlan{body: body, w: guard.Write{Kind: guard.PostStatus, Detail: fmt.Sprintf(" anew at the end (comment %d had fallen out of reach)", existing.ID)}, write: true}
	}
	body := r.settledStatus(s, p, existing, res, record, written)
	resolved := p.Resolved && p.Ledger == nil // the ledger needs a comment, clean or not
	w, ok := guard.StatusWrite(existing, body, resolved)
	return statusPlan{body: body, w: w, write: ok}
}

// buried reports whether the status comment is so far back that the next
// run, which reads the last RecentWindow comments and comes after at least
// one more, may not see it.
func (r *runner) buried(s snapshot, status *guard.Comment, res applied) bool {
	after := 0
	for _, c := range append(slices.Clone(s.recent.Comments), res.posted...) {
		if c.ID > status.ID {
			after++
		}
	}
	same := func(c guard.Comment) bool { return c.ID == status.ID }
	inRecent := slices.ContainsFunc(s.recent.Comments, same) || slices.ContainsFunc(res.posted, same)
	return !inRecent || after >= r.set.Config.RecentWindow()-1
}

// sameBody re-reads the issue and returns an error wrapping
// guard.ErrConflict unless its body is still body: on a server without
// compare-and-swap, the nearest the guard can come to it.
func (r *runner) sameBody(ctx context.Context, n int64, body string) error {
	is, err := r.forge.Issue(ctx, n)
	if err != nil {
		return r.forgeError("re-read the issue around a body write", err)
	}
	if is.Body != body {
		return fmt.Errorf("the body changed around the guard's write: %w", guard.ErrConflict)
	}
	return nil
}

// placeholderStatus posts the status comment of an issue that has none,
// holding a ledger with no accepted state yet (and the approval labels on
// the issue), before the run's other writes; the run completes it last.
func (r *runner) placeholderStatus(ctx context.Context, s *snapshot, res *applied) error {
	n := s.issue.Number
	l := guard.Ledger{Issue: n, Writer: r.self, Pending: []string{}}
	for _, a := range r.set.Config.Labels.Approval() {
		if slices.Contains(s.issue.LabelNames(), a) {
			l.Pending = append(l.Pending, a)
		}
	}
	written := r.forge.ServerTime()
	if written.IsZero() {
		written = r.o.Now()
	}
	l.Written = written.Unix()
	body := guard.StatusMarker(n) + "\n## ⏳ gns-guard: at work\n\nThe guard is making this run's writes; it completes this comment, which holds its ledger, last.\n" + guard.EncodeLedger(l, r.set.Config.LedgerKey) + "\n"
	before := len(res.posted)
	if err := r.createOnce(ctx, *s, body, hasMarker(guard.StatusMarker(n)), res, guard.Write{Kind: guard.PostStatus}); err != nil {
		return err
	}
	if len(res.posted) > before {
		c := res.posted[len(res.posted)-1]
		s.status = &c
	}
	return nil
}

// raced is a write that failed because a concurrent run changed what it
// wrote to: it counts as a conflict (read again), and says what failed.
type raced struct{ err error }

func (e raced) Error() string        { return e.err.Error() }
func (e raced) Unwrap() error        { return e.err }
func (e raced) Is(target error) bool { return target == guard.ErrConflict }
