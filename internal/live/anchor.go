package live

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/scopes"
)

// Anchors say where the reader finds the issues' anchors.
type Anchors struct {
	// Handed is what the runner handed the step in GNS_GUARD_ANCHOR
	// (action.yml): "N:TEXT", the value of issue N's anchor variable ("N:"
	// when there is none), read when the run's job was picked up. It costs
	// no request.
	Handed string
	// Store is the admin token's client: only the owner handles Actions
	// variables (nil: no admin-token).
	Store port.Variables
}

// handed is "" when the runner handed no anchor for n.
func (a Anchors) handed(n int64) string {
	if num, text, ok := strings.Cut(a.Handed, ":"); ok && num == strconv.FormatInt(n, 10) {
		return text
	}
	return ""
}

// anchorState finds what can be known of issue n's anchor: from the
// runner (no request), else from the store (one request), else nothing.
// A store that may not read variables leaves it unknown, with a note.
func (r *Reader) anchorState(ctx context.Context, n int64) (ledger.AnchorState, string, error) {
	st := ledger.AnchorState{Writable: r.Anchors.Store != nil}
	if num, text, ok := strings.Cut(r.Anchors.Handed, ":"); ok && num == strconv.FormatInt(n, 10) {
		st.Known, st.Text = true, text
		return st, "", nil
	}
	if r.Anchors.Store == nil {
		return st, "", nil
	}
	text, _, err := r.Anchors.Store.Variable(ctx, ledger.AnchorName(n))
	switch {
	case errors.Is(err, issues.ErrForbidden), errors.Is(err, issues.ErrUnauthorized):
		st.Writable = false
		why := "Actions variables need the repository owner's token (or a site admin's)"
		if se := issues.MissingScope(err); se != nil {
			why = scopes.Admin.Lacks("admin-token", se.Missing)
		}
		return st, fmt.Sprintf("admin-token may not read the repository variable %s that anchors the ledger: %s; without the anchor, a "+
			"copy of an older status comment put back is not caught", ledger.AnchorName(n), why), nil
	case err != nil:
		return st, "", r.Where.Error("read the anchor variable "+ledger.AnchorName(n), err)
	}
	st.Known, st.Text = true, text
	return st, "", nil
}

// follow reads the issue's comments in one request, those updated since the
// anchor's time, else the read hint's (docs/ledger.md#the-read-hint). The
// answer must prove it holds the status comment and the last window
// comments. Otherwise, or when governance labels moved since the record,
// the caller reads the timeline.
func (r *Reader) follow(ctx context.Context, s *Snapshot, window int) bool {
	if p, ok := r.anchorPointer(s, window); ok {
		return r.readSince(ctx, s, p) == sinceFollowed
	}
	if s.Issue.IsPull {
		return false
	}
	p, ok, err := r.hintPointer(ctx, s, window)
	if err != nil || !ok {
		s.hintMissed = err == nil
		return false
	}
	switch r.readSince(ctx, s, p) {
	case sinceFollowed:
		s.hinted = true
		return true
	case sinceUnproven:
		s.hintMissed = true
	}
	return false
}

// pointer is where a read of the comments updated since a time starts,
// and how it proves what its answer holds: the last comments (a tail of
// the issue, oldest first), older ones it judges too, the status comment
// among the answer, and whether the last comments are all of them. ok
// false sends the reader to the timeline.
type pointer struct {
	since time.Time
	prove func(answer []issues.Comment) (recent, older []issues.Comment, status *issues.Comment, all, ok bool)
}

// sinceOutcome is what a read through a pointer came to.
type sinceOutcome int

const (
	sinceFollowed sinceOutcome = iota // the read holds what the timeline's tail would
	sinceUnproven                     // the answer did not prove it (or there was none)
	sinceMoved                        // proven, but the record does not verify or the labels moved
)

// readSince takes since-updated comments in one request when p proves them
// and labels have not moved.
func (r *Reader) readSince(ctx context.Context, s *Snapshot, p pointer) sinceOutcome {
	n := s.Issue.Number
	answer, err := r.Forge.CommentsSince(ctx, n, p.since)
	if err != nil {
		return sinceUnproven // the timeline's read reports what is wrong
	}
	recent, older, status, all, ok := p.prove(answer)
	if !ok {
		return sinceUnproven
	}
	l, _ := s.RecordOf(status, r.Keys)
	if l == nil || guard.LabelsMoved(l, s.Issue, config.Default()) {
		return sinceMoved
	}
	s.Recent = issues.CommentPage{Comments: recent}
	s.Older, s.Labels = older, nil
	if in := func(c issues.Comment) bool { return c.ID == status.ID }; !slices.ContainsFunc(recent, in) && !slices.ContainsFunc(older, in) {
		s.Older = append(s.Older, *status)
	}
	s.Status = status
	if s.Guard == "" {
		s.Guard = status.Author
	}
	s.All, s.followed = all, true
	return sinceFollowed
}

// anchorPointer is the anchor's pointer, when it verifies and names at
// least window comments (or the first). Its answer must hold the status
// comment and every comment named. Older comments edited since are left
// out, as a timeline read leaves them.
func (r *Reader) anchorPointer(s *Snapshot, window int) (pointer, bool) {
	if !s.Anchor.Known || s.Anchor.Text == "" {
		return pointer{}, false
	}
	a, _ := ledger.ReadAnchor(s.Anchor.Text, s.Issue.RepoID, s.Issue.Number, r.Keys)
	if a == nil || (len(a.Tail) < window && !a.First) {
		return pointer{}, false
	}
	prove := func(answer []issues.Comment) ([]issues.Comment, []issues.Comment, *issues.Comment, bool, bool) {
		at := func(id int64) int {
			return slices.IndexFunc(answer, func(c issues.Comment) bool { return c.ID == id })
		}
		si := at(a.Status)
		if si < 0 || (s.Guard != "" && answer[si].Author != s.Guard) {
			return nil, nil, nil, false, false
		}
		for _, id := range a.Tail {
			if at(id) < 0 {
				return nil, nil, nil, false, false
			}
		}
		var first int64
		if len(a.Tail) > 0 {
			first = a.Tail[0]
		}
		var recent []issues.Comment
		for _, c := range answer {
			if c.ID >= first {
				recent = append(recent, c)
			}
		}
		status := answer[si]
		return recent, nil, &status, a.First, true
	}
	return pointer{since: time.Unix(a.Since, 0), prove: prove}, true
}

// hintPointer is the pointer of the body's read hint, when it has one: its
// answer must prove itself (guard.ProveHint) and hold the guard's status
// comment, found as the timeline's read finds it. The guard's login is
// settled first, as that read settles it.
func (r *Reader) hintPointer(ctx context.Context, s *Snapshot, window int) (pointer, bool, error) {
	at, ok := checkpoint.Hint(s.Issue.Body, config.Default().MaxCheckpointBytes)
	if !ok {
		return pointer{}, false, nil
	}
	if s.Guard == "" && r.TokenIsGuard && !r.Keys.Any() {
		if err := r.learnGuard(ctx, s); err != nil {
			return pointer{}, false, err
		}
	}
	prove := func(answer []issues.Comment) ([]issues.Comment, []issues.Comment, *issues.Comment, bool, bool) {
		recent, older, all, ok := guard.ProveHint(answer, at, s.Issue.CreatedAt, window)
		if s.verified == nil {
			s.verified = map[int64]*ledger.Verified{}
		}
		found := &Snapshot{Issue: s.Issue, Guard: s.Guard, verified: s.verified}
		if !ok || !r.pick(found, answer) {
			return nil, nil, nil, false, false
		}
		return recent, older, found.Status, all, true
	}
	return pointer{since: at, prove: prove}, true, nil
}
