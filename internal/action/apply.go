package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/prune"
	"github.com/gns-guard/gns-guard/internal/scopes"
	"github.com/gns-guard/gns-guard/internal/status"
)

// applied is what applying a plan did.
type applied struct {
	notes      []string // facts for the status comment and summary
	archiveIDs []int64
	pruned     bool
	filled     bool             // the placeholder issue number was set
	hinted     bool             // the body's read hint was written
	writes     []string         // one line per write made (or, in a dry run, planned)
	posted     []issues.Comment // comments this run posted
	statusID   int64            // the status comment the issue has after the run, 0: none
	added      []issues.Label   // the labels this run added, with the ids the server answered
	unlocked   bool             // the lock was refused
}

// lockRefused is the note left when the lock was refused; while it stands
// in the status comment and no admin-token is set, the lock is not retried.
const lockRefused = "The issue could not be locked: the token may not lock issues (HTTP 403; locking needs repository admin). Set " +
	"the admin-token input to a token with admin rights on this repository."

// noLock is for a server without an issue lock endpoint.
const noLock = "The issue could not be locked: the server has no lock endpoint for issues (HTTP 404; Forgejo has none)."

// adminLacks says what admin-token lacks, for a note on a write or read
// err refused: "" when err is no refusal for want of a scope.
func adminLacks(err error) string {
	if se := issues.MissingScope(err); se != nil {
		return scopes.Admin.Lacks("admin-token", se.Missing)
	}
	return ""
}

// noCAS: without content_version, body writes are last-write-wins.
const noCAS = "This server's issues carry no content_version (Forgejo, say), so the guard's body writes are not compare-and-swap: " +
	"it re-reads the body right before and after each write, which narrows but cannot close the window in which an agent's edit could be lost."

// apply makes the plan's writes, in the order Plan.Writes lists them,
// which loses nothing if the run dies half-way: archive, then body
// (compare-and-swap), then labels, lock, comments, and the status comment
// last. The first run on an issue posts a placeholder status comment,
// holding its ledger, before any other write.
func (r *runner) apply(ctx context.Context, in guard.Input, s *live.Snapshot, p *guard.Plan) (applied, error) {
	res := applied{notes: slices.Clone(r.notes)}
	if s.Issue.NoCAS && !s.Issue.BodyTooLarge {
		res.notes = append(res.notes, noCAS)
	}
	a := &applier{r: r, in: in, s: s, res: &res, existing: s.Status}
	if status.NeedsPlaceholder(p, s.Status) {
		body := status.Placeholder(in, p, r.serverTime())
		c, err := a.createOnce(ctx, body, hasMarker(issues.StatusMarker(in.Issue.Number)), guard.Write{Kind: guard.PostStatus})
		if err != nil {
			return res, err
		}
		a.existing = c
	}
	if p.Prune != nil {
		if err := a.prepareArchives(ctx, p.Prune); err != nil {
			return res, err
		}
	}
	for _, w := range p.Writes() {
		if err := a.write(ctx, p, w); err != nil {
			return res, err
		}
	}
	return res, a.status(ctx, p)
}

// applier makes one plan's writes.
type applier struct {
	r        *runner
	in       guard.Input
	s        *live.Snapshot
	res      *applied
	existing *issues.Comment    // the status comment
	archives guard.ArchiveMatch // the planned archive's parts already posted
	posted   bool               // this run posted an archive part
	have     map[int]int64      // part -> comment id
	pr       *prune.Result      // the prune being applied
	gone     []int64            // comments this run deleted
}

func (a *applier) fail(what string, err error) error { return a.r.reader.Where.Error(what, err) }

// write makes one write of the plan.
func (a *applier) write(ctx context.Context, p *guard.Plan, w guard.Write) error {
	f, n := a.r.forge, a.in.Issue.Number
	switch w.Kind {
	case guard.PostArchive:
		return a.postArchive(ctx, w)
	case guard.PatchBody:
		if err := a.patchBody(ctx); err != nil || p.Fill == nil || p.Fill.Number == 0 {
			return err
		}
		// The pruned body holds the number the fill sets.
		a.res.filled = true
		a.res.notes = append(a.res.notes, p.Fill.Note())
		return nil
	case guard.SetIssue:
		return a.fillIssue(ctx, p.Fill, w)
	case guard.WriteHint:
		if err := a.writeBody(ctx, p.Hint.Body, "write the read hint"); err != nil {
			return err
		}
		a.res.hinted = true
	case guard.AddLabels:
		if err := a.addLabels(ctx, p); err != nil {
			return a.fail(w.Planned(), err)
		}
	case guard.RemoveLabel:
		if err := f.RemoveLabel(ctx, n, w.Label); err != nil && !errors.Is(err, issues.ErrNotFound) {
			return a.fail(w.Planned(), err)
		}
	case guard.Lock:
		a.lock(ctx, p.Lock)
		return nil
	case guard.PostRecovery:
		_, err := a.createOnce(ctx, p.Recovery, hasMarker(issues.RecoveryMarker(n)), w)
		return err
	case guard.PostDigest:
		_, err := a.createOnce(ctx, p.Digest, sameBody(p.Digest), w)
		return err
	default:
		return fmt.Errorf("internal error: the plan lists a write the action cannot make: %s", w.Planned())
	}
	a.res.writes = append(a.res.writes, w.Done(""))
	return nil
}

// addLabels adds the plan's labels and gives the ledger record the ids of
// those it added, from the server's answer: an approval label the guard
// sets is judged by id from then on (a label renamed to its name later is
// another label).
func (a *applier) addLabels(ctx context.Context, p *guard.Plan) error {
	after, err := a.r.forge.AttachLabels(ctx, a.in.Issue.Number, p.AddLabels, a.r.cfg.Labels.Specs())
	if err == nil && p.Ledger != nil {
		guard.LearnLabelIDs(p.Ledger, after)
	}
	for _, l := range after {
		if slices.Contains(p.AddLabels, l.Name) {
			a.res.added = append(a.res.added, l)
		}
	}
	return err
}

// prepareArchives finds what the issue holds of the planned archive:
// parts posted already (a re-run, or a run cut short between its archive
// and its body), impostors, which are reported and left alone, and the
// guard's stale archives the plan replaces, which are deleted.
func (a *applier) prepareArchives(ctx context.Context, pr *prune.Result) error {
	a.pr = pr
	a.archives = guard.MatchArchives(a.in, pr)
	a.have = a.archives.Have
	if note := a.archives.ImpostorNote(); note != "" {
		a.res.notes = append(a.res.notes, note)
		a.r.log.untrusted("gns-guard: warning: " + note)
	}
	if len(a.archives.Stale) > 0 {
		// A stale archive's entries are in the body this run read. Had a
		// concurrent run's prune landed between this run's read of the body
		// and of the comments, the archive judged stale would be that
		// run's, and deleting it would lose its entries: the body is read
		// again first, and a changed one is a conflict (read again).
		if err := a.r.sameBody(ctx, a.in.Issue.Number, a.in.Issue.Body); err != nil {
			return err
		}
	}
	for _, id := range a.archives.Stale {
		if err := a.r.forge.DeleteComment(ctx, id); err != nil && !errors.Is(err, issues.ErrNotFound) {
			return a.fail("delete a stale archive comment", err)
		}
		a.res.writes = append(a.res.writes, fmt.Sprintf("deleted stale archive comment %d", id))
	}
	return nil
}

// postArchive posts one archive part unless it is there already; after
// the last part, the duplicates concurrent runs posted go (the lowest id
// wins).
func (a *applier) postArchive(ctx context.Context, w guard.Write) error {
	pr := a.pr
	if _, ok := a.have[w.Part]; !ok {
		c, err := a.r.forge.CreateComment(ctx, a.in.Issue.Number, pr.Archives[w.Part-1])
		if err != nil {
			return a.fail(w.Planned(), err)
		}
		a.have[w.Part], a.posted = c.ID, true
		a.res.posted = append(a.res.posted, c)
		a.res.writes = append(a.res.writes, w.Done(fmt.Sprintf("comment %d", c.ID)))
	}
	if w.Part < len(pr.Archives) || !a.posted {
		return nil
	}
	page, err := a.r.forge.RecentComments(ctx, a.in.Issue, a.r.cfg.RecentWindow()+len(pr.Archives))
	if err != nil {
		return a.fail("re-read the recent comments", err)
	}
	for part := 1; part <= len(pr.Archives); part++ {
		id, err := a.keepLowest(ctx, page.Comments, func(c issues.Comment) bool { return guard.SamePart(c.Body, pr.Archives[part-1]) })
		if err != nil {
			return err
		}
		if id != 0 {
			a.have[part] = id
		}
	}
	return nil
}

// patchBody writes the pruned body with compare-and-swap.
func (a *applier) patchBody(ctx context.Context) error {
	pr := a.pr
	if err := a.writeBody(ctx, pr.Body, "write the pruned checkpoint"); err != nil {
		return err
	}
	for part := 1; part <= len(pr.Archives); part++ {
		a.res.archiveIDs = append(a.res.archiveIDs, a.have[part])
	}
	a.res.pruned = true
	a.res.writes = append(a.res.writes, guard.PatchWrite(pr).Done(""))
	return nil
}

// fillIssue sets the placeholder number by compare-and-swap, and says so.
func (a *applier) fillIssue(ctx context.Context, f *guard.Fill, w guard.Write) error {
	if f == nil || f.Number == 0 {
		return fmt.Errorf("internal error: the plan sets checkpoint.issue without a number: %s", w.Planned())
	}
	if err := a.writeBody(ctx, f.Body, "set the checkpoint's issue number"); err != nil {
		return err
	}
	a.res.filled = true
	a.res.notes = append(a.res.notes, f.Note())
	a.res.writes = append(a.res.writes, w.Done(""))
	return nil
}

// writeBody writes body over the body the run read, with compare-and-swap
// (a conflict is returned as it is: the run reads again and decides anew).
// On a server without content_version it re-reads the body right before
// and after the write instead.
func (a *applier) writeBody(ctx context.Context, body, what string) error {
	n := a.in.Issue.Number
	if a.in.Issue.NoCAS {
		if err := a.r.sameBody(ctx, n, a.in.Issue.Body); err != nil {
			return err
		}
	}
	if _, err := a.r.forge.EditBody(ctx, n, body, a.in.Issue.ContentVersion); err != nil {
		if errors.Is(err, issues.ErrConflict) {
			return err
		}
		return a.fail(what, err)
	}
	if a.in.Issue.NoCAS {
		if err := a.r.sameBody(ctx, n, body); err != nil {
			// Someone wrote after the guard: nothing of theirs was lost.
			a.r.log.infof("gns-guard: warning: the body changed right after the guard's write; the next run judges it")
		}
	}
	return nil
}

// keepLowest deletes the guard's duplicates and returns the lowest id (0:
// none).
func (a *applier) keepLowest(ctx context.Context, comments []issues.Comment, match func(issues.Comment) bool) (int64, error) {
	var ids []int64
	for _, c := range comments {
		if c.Author == a.in.Self && match(c) {
			ids = append(ids, c.ID)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	slices.Sort(ids)
	for _, id := range ids[1:] {
		if err := a.r.forge.DeleteComment(ctx, id); err != nil && !errors.Is(err, issues.ErrNotFound) {
			return 0, a.fail("delete a duplicate comment", err)
		}
		a.res.writes = append(a.res.writes, fmt.Sprintf("deleted duplicate comment %d (a concurrent run posted the same)", id))
	}
	return ids[0], nil
}

// createOnce posts body unless one of the guard's own last comments
// matches already, then deletes the duplicates concurrent runs posted. It
// returns the comment posted, or nil.
func (a *applier) createOnce(ctx context.Context, body string, same func(issues.Comment) bool, w guard.Write) (*issues.Comment, error) {
	for _, c := range a.in.Recent {
		if c.Author == a.in.Self && same(c) {
			return nil, nil
		}
	}
	c, err := a.r.forge.CreateComment(ctx, a.in.Issue.Number, body)
	if err != nil {
		return nil, a.fail(w.Planned(), err)
	}
	a.res.posted = append(a.res.posted, c)
	a.res.writes = append(a.res.writes, w.Done(fmt.Sprintf("comment %d", c.ID)))
	page, err := a.r.forge.RecentComments(ctx, a.in.Issue, a.r.cfg.RecentWindow()+1)
	if err != nil {
		return nil, a.fail("re-read the recent comments", err)
	}
	_, err = a.keepLowest(ctx, page.Comments, same)
	return &c, err
}

// lock locks the issue, with the admin token when one is set. A refused
// lock is reported, never fatal; without an admin token it is tried once.
func (a *applier) lock(ctx context.Context, reason string) {
	r, res := a.r, a.res
	if r.set.AdminToken == "" && a.existing != nil && strings.Contains(a.existing.Body, lockRefused) {
		res.notes, res.unlocked = append(res.notes, lockRefused), true
		return
	}
	err := r.admin.Lock(ctx, a.in.Issue.Number, reason)
	switch {
	case err == nil:
		res.writes = append(res.writes, guard.LockWrite(reason).Done(""))
	case errors.Is(err, issues.ErrForbidden):
		note := lockRefused
		if lacks := adminLacks(err); lacks != "" && r.set.AdminToken != "" {
			note = "The issue could not be locked: " + lacks + "."
		}
		res.notes, res.unlocked = append(res.notes, note), true
		r.log.infof("gns-guard: warning: %s", note)
	case errors.Is(err, issues.ErrNotFound):
		// Forgejo has no issue lock endpoint: reported, never fatal.
		res.notes = append(res.notes, noLock)
		r.log.infof("gns-guard: warning: %s", noLock)
	default:
		note := "The issue could not be locked: the server answered an error. The next run tries again."
		res.notes = append(res.notes, note)
		r.log.untrusted("gns-guard: warning: lock failed: " + err.Error())
	}
}

// status brings the sticky status comment to what the decision core
// plans for it (status.PlanWrite): updated in place, posted anew at the
// end (the old one deleted), posted, or left alone.
func (a *applier) status(ctx context.Context, p *guard.Plan) error {
	existing := a.existing
	st := status.PlanWrite(a.in, p, existing, a.done(p), a.r.serverTime())
	if existing != nil {
		a.res.statusID = existing.ID
	}
	switch {
	case !st.Do:
		return a.anchor(ctx, p, existing, false)
	case st.Write.Kind == guard.UpdateStatus && isArchive(*existing):
		return fmt.Errorf("internal error: the status comment found (%d) is an archive comment, which is never edited", existing.ID)
	case st.Write.Kind == guard.UpdateStatus:
		return a.updateStatus(ctx, p, st)
	case st.Moved:
		return a.moveStatus(ctx, p, st)
	}
	c, err := a.createOnce(ctx, st.Body, hasMarker(issues.StatusMarker(a.in.Issue.Number)), st.Write)
	if c != nil {
		a.res.statusID = c.ID
	}
	if err != nil || c == nil {
		return err
	}
	return a.anchor(ctx, p, c, true)
}

// updateStatus edits the status comment found in place.
func (a *applier) updateStatus(ctx context.Context, p *guard.Plan, st status.CommentWrite) error {
	c, err := a.r.forge.EditComment(ctx, a.existing.ID, st.Body)
	if err != nil {
		if errors.Is(err, issues.ErrUnreachable) {
			return a.fail(st.Write.Planned(), err)
		}
		// Gitea answers the edit of a comment that a concurrent run
		// changed (or deleted) since it was read with 500 (or 404):
		// read it all again, as after a body conflict; an answer that
		// keeps failing still ends the run when the attempts are spent.
		return raced{a.fail(st.Write.Planned(), err)}
	}
	a.res.writes = append(a.res.writes, st.Write.Done(""))
	return a.anchor(ctx, p, &c, true)
}

// moveStatus reposts the status comment last and deletes the older ones.
func (a *applier) moveStatus(ctx context.Context, p *guard.Plan, st status.CommentWrite) error {
	r, n := a.r, a.in.Issue.Number
	c, err := r.forge.CreateComment(ctx, n, st.Body)
	if err != nil {
		return a.fail(st.Write.Planned(), err)
	}
	a.res.posted = append(a.res.posted, c)
	a.res.statusID = c.ID
	a.res.writes = append(a.res.writes, st.Write.Done(fmt.Sprintf("comment %d", c.ID)))
	for _, old := range append(a.s.Comments(), a.res.posted...) {
		if old.ID != c.ID && old.Author == a.in.Self && hasMarker(issues.StatusMarker(n))(old) {
			if err := r.forge.DeleteComment(ctx, old.ID); err != nil && !errors.Is(err, issues.ErrNotFound) {
				return a.fail("delete the old status comment", err)
			}
			a.res.writes = append(a.res.writes, fmt.Sprintf("deleted the old status comment %d", old.ID))
			a.gone = append(a.gone, old.ID)
		}
	}
	return a.anchor(ctx, p, &c, true)
}

// anchor seals the status comment's record with the issue's anchor
// (docs/ledger.md#the-anchor) when admin-token can write it and it is not
// sealed already. A record the run did not trust is never sealed. A failed
// write is reported in the status comment and the log, never fatal: the
// next run tries again.
func (a *applier) anchor(ctx context.Context, p *guard.Plan, final *issues.Comment, wrote bool) error {
	r, n, st := a.r, a.in.Issue.Number, a.in.Anchor
	if final == nil || !st.Writable || r.reader.Anchors.Store == nil || (!wrote && !p.RecordTrusted) {
		return nil
	}
	l, _ := a.s.RecordOf(final, ledger.ConfigKeys(r.cfg))
	if l == nil {
		return nil
	}
	next := guard.NextAnchor(a.in, l.Seq, ledger.Line(final.Body), *final, a.after(*final), a.s.Whole())
	text, ok := ledger.AnchorWrite(st, ledger.ConfigKeys(r.cfg), next, r.cfg.LedgerKey)
	if !ok {
		return nil
	}
	name := ledger.AnchorName(n)
	err := r.reader.Anchors.Store.SetVariable(ctx, name, text, st.Known && st.Text != "")
	switch {
	case err == nil:
		a.res.writes = append(a.res.writes, fmt.Sprintf("wrote the anchor %s (record %d)", name, l.Seq))
		if p.AnchorLags {
			r.log.infof("gns-guard: the anchor %s sealed an older record than the status comment holds (its last write failed): written anew", name)
		}
	case errors.Is(err, issues.ErrForbidden), errors.Is(err, issues.ErrUnauthorized):
		why := "admin-token may not write Actions variables (they need the repository owner's token, or a site admin's)"
		if lacks := adminLacks(err); lacks != "" {
			why = lacks
		}
		note := fmt.Sprintf("The ledger's anchor (the repository variable %s) could not be written: %s. Until it can, a copy of an "+
			"older status comment put back is not caught.", name, why)
		a.res.notes = append(a.res.notes, note)
		r.log.infof("gns-guard: warning: %s", note)
	default:
		note := fmt.Sprintf("The ledger's anchor (the repository variable %s) could not be written: the server answered an error. The "+
			"next run writes it.", name)
		a.res.notes = append(a.res.notes, note)
		r.log.untrusted("gns-guard: warning: anchor write failed: " + err.Error())
	}
	return nil
}

// after are the issue's comments read or posted, as they are after the
// run (final is the status comment as written), oldest first.
func (a *applier) after(final issues.Comment) []issues.Comment {
	var out []issues.Comment
	for _, c := range append(slices.Clone(a.in.Recent), a.res.posted...) {
		if c.ID == final.ID || slices.Contains(a.gone, c.ID) || slices.ContainsFunc(out, func(o issues.Comment) bool { return o.ID == c.ID }) {
			continue
		}
		out = append(out, c)
	}
	out = append(out, final)
	slices.SortFunc(out, func(x, y issues.Comment) int { return cmp.Compare(x.ID, y.ID) })
	return out
}

// done is what applying did, for the status comment.
func (a *applier) done(p *guard.Plan) status.Applied {
	return status.Applied{
		Notes:  a.res.notes,
		Posted: a.res.posted,
		Pruned: p.Prune != nil && (a.res.pruned || a.r.cfg.DryRun),
		Filled: p.Fill != nil && (a.res.filled || a.r.cfg.DryRun),
		Hinted: p.Hint != nil && (a.res.hinted || a.r.cfg.DryRun),
		Locked: p.Lock != "" && !a.res.unlocked,
		Read:   a.r.readAt,
	}
}

// serverTime is the server's clock at its last answer, else local.
func (r *runner) serverTime() time.Time {
	if t := r.forge.ServerTime(); !t.IsZero() {
		return t
	}
	return r.o.Now()
}

// hasMarker matches comments that carry marker and are not archives: a
// marker added to an archive comment never makes it the status comment (or
// the recovery request), so the guard never edits nor deletes it.
func hasMarker(marker string) func(issues.Comment) bool {
	return func(c issues.Comment) bool { return strings.Contains(c.Body, marker) && !isArchive(c) }
}

// isArchive reports whether a comment carries an archive marker (of any
// issue): such a comment is never edited, and never taken for another
// kind of the guard's comments.
func isArchive(c issues.Comment) bool { return strings.Contains(c.Body, prune.MarkerPrefix) }

// sameBody matches comments whose body is body.
func sameBody(body string) func(issues.Comment) bool {
	return func(c issues.Comment) bool { return strings.TrimSpace(c.Body) == strings.TrimSpace(body) }
}

// sameBody re-reads the issue and returns an error wrapping
// issues.ErrConflict unless its body is still body: on a server without
// compare-and-swap, the nearest the guard can come to it.
func (r *runner) sameBody(ctx context.Context, n int64, body string) error {
	is, err := r.forge.Issue(ctx, n)
	if err != nil {
		return r.reader.Where.Error("re-read the issue around a body write", err)
	}
	if is.Body != body {
		return fmt.Errorf("the body changed around the guard's write: %w", issues.ErrConflict)
	}
	return nil
}

// raced is a write that failed because a concurrent run changed what it
// wrote to: it counts as a conflict (read again), and says what failed.
type raced struct{ err error }

func (e raced) Error() string        { return e.err.Error() }
func (e raced) Unwrap() error        { return e.err }
func (e raced) Is(target error) bool { return target == issues.ErrConflict }
