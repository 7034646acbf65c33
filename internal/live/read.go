package live

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// Reader reads live issues of one repository.
type Reader struct {
	// Forge is the client every read goes through.
	Forge port.IssueReader
	// Admin answers repository-admin questions; nil answers no.
	Admin port.Permissions
	// Client, set by Open, is the whole client Forge and Admin are roles
	// of: what a verb also asks or writes.
	Client port.Forge
	// Where names the reader in messages.
	Where Where
	// Guard is the login when known up front (Actions user, --guard-user);
	// "" finds it.
	Guard string
	// TokenIsGuard (action mode): with no signed record naming the guard,
	// ask whose token it is.
	TokenIsGuard bool
	// Keys verify records; with none, records are trusted by author.
	Keys ledger.Keys
	// Anchors say where the issues' anchors are found.
	Anchors Anchors

	admins  map[string]bool   // Decide's answers, kept across decisions
	writers *guard.WriterList // who can write the issues, once read
}

// Snapshot is what one read of an issue returned.
type Snapshot struct {
	Issue issues.Issue
	// Governed is false with no checkpoint or governed label; nothing more
	// is read.
	Governed bool
	// Recent are last comments with label events; Files, a pull's paths.
	Recent issues.CommentPage
	Files  []string
	// Status is the guard's sticky status comment (it holds the ledger);
	// Older the comments read further back to find it (or, through the
	// read hint, the older ones edited since its time); Labels every label
	// event of the timeline entries read, oldest first.
	Status *issues.Comment
	Older  []issues.Comment
	Labels []issues.LabelEvent
	// Unreached: no status comment found before the search stopped short.
	Unreached bool
	// All says Older and Recent hold every comment.
	All bool
	// Guard is the guard's login, as known or found.
	Guard string
	// Anchor as read; Notes go in the status comment.
	Anchor ledger.AnchorState
	Notes  []string
	// verified are records by comment id (RecordOf).
	verified map[int64]*ledger.Verified
	// followed says the comments were read the way the anchor or the
	// body's read hint points to, not from the timeline; hinted that the
	// hint did. hintMissed says the timeline was read because the body's
	// hint did not prove the last comments (guard.Hint.Missed).
	followed, hinted, hintMissed bool
}

// RecordOf verifies once per snapshot; an edit or other keys verify anew.
func (s *Snapshot) RecordOf(c *issues.Comment, keys ledger.Keys) (*ledger.Record, string) {
	if c == nil {
		return nil, ""
	}
	if v := s.verified[c.ID]; v.Of(c, keys) {
		return v.Record, v.Problem
	}
	v := ledger.Verify(c, s.Issue.Number, keys)
	if s.verified == nil {
		s.verified = map[int64]*ledger.Verified{}
	}
	s.verified[c.ID] = v
	return v.Record, v.Problem
}

// Verified is the record the decision takes; nil without one.
func (s *Snapshot) Verified(keys ledger.Keys) *ledger.Verified {
	if s.Status == nil {
		return nil
	}
	s.RecordOf(s.Status, keys)
	return s.verified[s.Status.ID]
}

// Drop removes comments the run deleted after the read.
func (s *Snapshot) Drop(ids []int64) {
	gone := func(c issues.Comment) bool { return slices.Contains(ids, c.ID) }
	s.Recent.Comments = slices.DeleteFunc(s.Recent.Comments, gone)
	s.Older = slices.DeleteFunc(s.Older, gone)
}

// Followed: anchor or read hint, two requests, instead of the timeline.
func (s *Snapshot) Followed() bool { return s.followed }

// Hinted says the read followed the body's read hint.
func (s *Snapshot) Hinted() bool { return s.followed && s.hinted }

// Hint is what the read knows of the body's read hint: the time a hint
// written now carries (the window-th newest comment's creation, no later
// than the status comment's last update unless the run moves that
// comment), and whether the read missed it.
func (s *Snapshot) Hint(window int) guard.Hint {
	tail := s.Recent.Comments
	if !s.followed {
		tail = s.Comments() // the timeline's tail, read back in one piece
	}
	return guard.Hint{
		At:     guard.HintAt(tail, s.Whole(), s.Issue.CreatedAt, s.Status, window),
		Moved:  guard.HintAt(tail, s.Whole(), s.Issue.CreatedAt, nil, window),
		Missed: s.hintMissed,
	}
}

// Whole says the read holds every comment of the issue.
func (s *Snapshot) Whole() bool {
	if s.followed {
		return s.All
	}
	return s.All || (s.Recent.Start == 0 && len(s.Older) == 0 && s.Recent.Unread == 0)
}

// Comments are every comment read, oldest first.
func (s *Snapshot) Comments() []issues.Comment {
	return append(slices.Clone(s.Older), s.Recent.Comments...)
}

// ReadOptions say how much of an issue to read.
type ReadOptions struct {
	// Window is the least number of last comments read.
	Window int
	// Pull reads changed files, also for any issue the server says is a
	// pull.
	Pull bool
	// All reads every comment (history, recover); requests grow with the
	// issue.
	All bool
	// Ungoverned reads comments even of an ungoverned issue.
	Ungoverned bool
	// Shallow seeks the status comment among the last only (`context`).
	Shallow bool
}

// MaxStatusPages bounds the deeper search, for buried comments and first
// runs.
const MaxStatusPages = 20

// maxAllPages (50 entries each) exceeds any real issue.
const maxAllPages = 10000

// Read costs two requests for a clean governed issue with a recent status
// comment.
func (r *Reader) Read(ctx context.Context, number int64, o ReadOptions) (*Snapshot, error) {
	issue, err := r.Forge.Issue(ctx, number)
	if errors.Is(err, issues.ErrNotFound) {
		return nil, r.Where.missing(ctx, number)
	}
	if err != nil {
		return nil, r.Where.Error(fmt.Sprintf("read issue #%d", number), err)
	}
	return r.ReadIssue(ctx, issue, o)
}

// ReadIssue is Read without its first request.
func (r *Reader) ReadIssue(ctx context.Context, issue issues.Issue, o ReadOptions) (*Snapshot, error) {
	s := &Snapshot{Guard: r.Guard}
	number := issue.Number
	var err error
	s.Issue = issue
	o.Pull = o.Pull || issue.IsPull
	// An anchor keeps an issue governed; the runner hands it over free.
	s.Governed = o.Pull || guard.IsGoverned(issue, config.Default()) || r.Anchors.handed(number) != ""
	if !s.Governed && !o.Ungoverned && !o.All {
		return s, nil
	}
	if o.Pull {
		if s.Files, err = r.Forge.PullFiles(ctx, number); err != nil {
			return nil, r.Where.Error(fmt.Sprintf("list the files of pull request #%d", number), err)
		}
	}
	if s.Governed && !o.All {
		var note string
		if s.Anchor, note, err = r.anchorState(ctx, number); err != nil {
			return nil, err
		}
		if note != "" {
			s.Notes = append(s.Notes, note)
		}
		if !o.Shallow && r.follow(ctx, s, max(o.Window, 3)) {
			return s, nil
		}
	}
	return s, r.readTimeline(ctx, s, o)
}

// readTimeline reads the tail, then back for the status comment.
func (r *Reader) readTimeline(ctx context.Context, s *Snapshot, o ReadOptions) error {
	number := s.Issue.Number
	var err error
	if s.Recent, err = r.Forge.RecentComments(ctx, s.Issue, max(o.Window, 3)); err != nil {
		return r.Where.Error(fmt.Sprintf("read the last comments of issue #%d", number), err)
	}
	s.Labels = s.Recent.Labels
	s.Older, s.Status, s.followed, s.hinted = nil, nil, false, false
	pages := MaxStatusPages
	switch {
	case o.All:
		pages = maxAllPages
	case o.Shallow:
		pages = 0
	}
	return r.findStatus(ctx, s, pages, o.All)
}

// More reads back until n recent comments or the first one.
func (r *Reader) More(ctx context.Context, s *Snapshot, n int) error {
	if s.followed && len(s.Recent.Comments) < n && !s.All {
		// Too few comments for the configuration: read the timeline.
		s.hintMissed = s.hintMissed || s.hinted
		return r.readTimeline(ctx, s, ReadOptions{Window: n})
	}
	for len(s.Recent.Comments) < n && s.Recent.Start > 0 && len(s.Older) == 0 {
		page, err := r.Forge.CommentsBefore(ctx, s.Issue.Number, s.Recent.Start)
		if err != nil {
			return r.Where.Error(fmt.Sprintf("read the last comments of issue #%d", s.Issue.Number), err)
		}
		if page.Start >= s.Recent.Start {
			break
		}
		s.Recent.Comments = append(page.Comments, s.Recent.Comments...)
		s.Recent.Labels = append(page.Labels, s.Recent.Labels...)
		s.Recent.Start = page.Start
	}
	return nil
}

// findStatus finds the guard's login (unless known) and its sticky status
// comment, reading back from the last comments a bounded number of pages
// (all of them with all), and collecting the comments and label events on
// the way.
func (r *Reader) findStatus(ctx context.Context, s *Snapshot, pages int, all bool) error {
	n := s.Issue.Number
	if s.Guard == "" && r.TokenIsGuard && !r.Keys.Any() {
		if err := r.learnGuard(ctx, s); err != nil {
			return err
		}
	}
	if r.pick(s, s.Recent.Comments) && !all {
		return nil
	}
	start, found, err := r.readBack(ctx, s, pages, all)
	if err != nil || found {
		return err
	}
	s.All = start == 0
	if all && start > 0 {
		return r.Where.Error(fmt.Sprintf("read the comments of issue #%d", n), fmt.Errorf("the timeline has more than %d pages", pages))
	}
	s.Unreached = s.Status == nil && start > 0
	if s.Guard == "" {
		if err := r.learnGuard(ctx, s); err != nil {
			return err
		}
		r.pick(s, s.Comments())
	}
	return nil
}

// readBack reads at most pages pages of the timeline before the last
// comments into s.Older and s.Labels, until it finds the status comment
// (unless all) or the first entry. It returns the offset it stopped at and
// whether it found the status comment.
func (r *Reader) readBack(ctx context.Context, s *Snapshot, pages int, all bool) (start int, found bool, err error) {
	n := s.Issue.Number
	start = s.Recent.Start
	for p := 0; start > 0 && p < pages; p++ {
		page, err := r.Forge.CommentsBefore(ctx, n, start)
		if err != nil {
			return 0, false, r.Where.Error(fmt.Sprintf("read the timeline of issue #%d", n), err)
		}
		if page.Start >= start {
			return 0, false, r.Where.Error(fmt.Sprintf("read the timeline of issue #%d", n), fmt.Errorf("the timeline did not move back "+
				"from offset %d", start))
		}
		s.Older = append(page.Comments, s.Older...)
		s.Labels = append(page.Labels, s.Labels...)
		start = page.Start
		if s.Status == nil && r.pick(s, page.Comments) && !all {
			return start, true, nil
		}
	}
	return start, false, nil
}

// pick sets s.Status from comments (oldest first): the guard's own status
// comment, never an archive, the newest whose record verifies, else the
// newest. While the guard's login is unknown it is the author of a status
// comment whose record names it as writer: the Actions user when one is,
// else the newest.
func (r *Reader) pick(s *Snapshot, comments []issues.Comment) bool {
	n := s.Issue.Number
	if s.Guard == "" {
		for i := len(comments) - 1; i >= 0; i-- {
			c := &comments[i]
			if !isStatus(*c, n) || !r.signedBy(s, c) {
				continue
			}
			if s.Guard == "" || c.Author == issues.ActionsUser {
				// Unverified claims: the Actions user's wins, then the
				// newest.
				s.Guard = c.Author
			}
		}
		if s.Guard == "" {
			return false
		}
	}
	var newest *issues.Comment
	for i := len(comments) - 1; i >= 0; i-- {
		c := &comments[i]
		if c.Author != s.Guard || !isStatus(*c, n) {
			continue
		}
		if newest == nil {
			newest = c
		}
		if l, _ := s.RecordOf(c, r.Keys); l != nil {
			s.Status = c
			return true
		}
	}
	if newest != nil {
		s.Status = newest
	}
	return newest != nil
}

// signedBy: names c's author and, with a key, verifies.
func (r *Reader) signedBy(s *Snapshot, c *issues.Comment) bool {
	if r.TokenIsGuard && !r.Keys.Any() {
		// Never take the guard's login from a record anyone could write: ask.
		return false
	}
	l, _ := s.RecordOf(c, r.Keys)
	return l != nil && l.Writer != "" && l.Writer == c.Author
}

// learnGuard: the token's user if the token is the guard's (one request),
// else the Actions user.
func (r *Reader) learnGuard(ctx context.Context, s *Snapshot) error {
	if !r.TokenIsGuard {
		s.Guard = issues.ActionsUser
		return nil
	}
	self, err := r.Forge.Self(ctx)
	if err != nil {
		return r.Where.Error("look up the token's user", err)
	}
	s.Guard = self
	return nil
}

// isStatus excludes archives, so an archive is never edited as status.
func isStatus(c issues.Comment, n int64) bool {
	return strings.Contains(c.Body, issues.StatusMarker(n)) && !strings.Contains(c.Body, prune.MarkerPrefix)
}
