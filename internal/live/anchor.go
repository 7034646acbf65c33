package live

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/port"
)

// Anchors say where the reader finds the issues' anchors.
type Anchors struct {
	// Handed is what the runner handed the step in GNS_GUARD_ANCHOR
	// (action.yml): "N:TEXT", the value of issue N's anchor variable ("N:"
	// when there is none), read when the run's job was picked up. It costs
	// no request.
	Handed string
	// Store reads anchors the runner did not hand over, and writes them:
	// the admin token's client, as only the repository's owner may read
	// or write Actions variables (nil: admin-token is not set).
	Store port.Variables
}

// handed is issue n's anchor as the runner handed it over ("" when it
// handed none, or none for n).
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
		return st, fmt.Sprintf("admin-token may not read the repository variable %s that anchors the ledger: Actions variables need the repository owner's token (or a site admin's); without the anchor, a copy of an older status comment put back is not caught", ledger.AnchorName(n)), nil
	case err != nil:
		return st, "", r.Where.Error("read the anchor variable "+ledger.AnchorName(n), err)
	}
	st.Known, st.Text = true, text
	return st, "", nil
}

// follow reads the issue's comments the constant-cost way its anchor
// points to: the comments updated since the anchor's time, in one
// request, which must hold the status comment and the last comments the
// anchor names (a comment deleted since, or a pointer that does not hold,
// sends the caller to the timeline). It also gives up when the governance
// labels moved since the record: who moved them is on the timeline.
func (r *Reader) follow(ctx context.Context, s *Snapshot, window int) bool {
	ar := r.anchored(ctx, s, window)
	if ar == nil {
		return false
	}
	a, status := ar.anchor, ar.status
	var first int64
	if len(a.Tail) > 0 {
		first = a.Tail[0]
	}
	// Older comments edited since are left out, as a timeline read leaves
	// them: they are not among what an agent loads, nor what the guard
	// judges (its status comment aside).
	var recent []issues.Comment
	for _, c := range ar.comments {
		if c.ID >= first {
			recent = append(recent, c)
		}
	}
	s.Recent = issues.CommentPage{Comments: recent}
	s.Older, s.Labels = nil, nil
	if status.ID < first {
		s.Older = []issues.Comment{status}
	}
	s.Status = &status
	if s.Guard == "" {
		s.Guard = status.Author
	}
	s.All, s.followed = a.First, true
	return true
}

// anchorRead is what following an anchor read: the anchor, the comments
// updated since its time, and the status comment among them.
type anchorRead struct {
	anchor   *ledger.Anchor
	comments []issues.Comment
	status   issues.Comment
}

// anchored reads the comments updated since the issue's anchor. It returns
// nil, for the caller to read the timeline, unless the anchor verifies and
// names at least window comments (or the first), everything it names is
// among them, the status comment is the guard's, and the governance labels
// have not moved since its ledger record.
func (r *Reader) anchored(ctx context.Context, s *Snapshot, window int) *anchorRead {
	n := s.Issue.Number
	if !s.Anchor.Known || s.Anchor.Text == "" {
		return nil
	}
	a, _ := ledger.ReadAnchor(s.Anchor.Text, s.Issue.RepoID, n, r.Keys)
	if a == nil || (len(a.Tail) < window && !a.First) {
		return nil
	}
	comments, err := r.Forge.CommentsSince(ctx, n, time.Unix(a.Since, 0))
	if err != nil {
		return nil // the timeline's read reports what is wrong
	}
	at := func(id int64) int {
		return slices.IndexFunc(comments, func(c issues.Comment) bool { return c.ID == id })
	}
	si := at(a.Status)
	if si < 0 || (s.Guard != "" && comments[si].Author != s.Guard) {
		return nil
	}
	for _, id := range a.Tail {
		if at(id) < 0 {
			return nil
		}
	}
	status := comments[si]
	l, _ := ledger.Read(&status, n, r.Keys)
	if l == nil || guard.LabelsMoved(l, s.Issue, issues.DefaultConfig()) {
		return nil
	}
	return &anchorRead{anchor: a, comments: comments, status: status}
}
