package live

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
)

var opened = written.Add(-time.Hour)

// hintedIssue is issue 7 on the fake Gitea, read by a reader who may not
// read permissions.
type hintedIssue struct {
	s *fakeforge.Server
	f *fakeforge.Client
}

// hinted is an issue opened before the guard's first run, with the status
// comment (200) near its start, last updated before the last three of the
// n comments after it, one a minute; its body carries the hint at, when
// not zero.
func hinted(n int, at time.Time) hintedIssue {
	s := fakeforge.New("o/r")
	s.AddIssue(issues.Issue{Number: 7, Body: body, CreatedAt: opened}, "alice")
	for i := range 3 {
		s.AddComment(7, issues.Comment{ID: int64(100 + i), Author: "alice", Body: "a note", CreatedAt: opened, UpdatedAt: opened})
	}
	st := status(200, issues.ActionsUser, issues.ActionsUser, nil, nil)
	st.CreatedAt, st.UpdatedAt = written, written.Add(time.Duration(n-3)*time.Minute)
	s.AddComment(7, st)
	for i := 1; i <= n; i++ {
		t := written.Add(time.Duration(i) * time.Minute)
		s.AddComment(7, issues.Comment{ID: int64(300 + i), Author: "alice", Body: "noise", CreatedAt: t, UpdatedAt: t})
	}
	h := hintedIssue{s: s, f: s.As("reader")}
	if !at.IsZero() {
		h.setHint(at)
	}
	return h
}

// comments are the issue's comments, oldest first.
func (h hintedIssue) comments() []issues.Comment { return h.s.Comments(7) }

// setHint writes the read hint at into the body.
func (h hintedIssue) setHint(at time.Time) {
	h.s.Change(7, func(is *issues.Issue) { is.Body = checkpoint.WithHint(body, at, 0) })
}

// honest is the hint the guard or report would write on the issue.
func (h hintedIssue) honest() time.Time {
	cs := h.comments()
	return guard.HintAt(cs, false, opened, &cs[3], 3)
}

// twoRequests says the read made two requests: the issue, and the
// comments updated since the hint.
func (h hintedIssue) twoRequests() bool {
	return h.s.Requests() == 2 && h.s.Calls("CommentsSince") == 1
}

func read(t *testing.T, h hintedIssue) *Snapshot {
	t.Helper()
	r := &Reader{Forge: h.f, Guard: issues.ActionsUser}
	s, err := r.Read(context.Background(), 7, ReadOptions{Window: 3})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func lastIDs(cs []issues.Comment, k int) []int64 {
	var out []int64
	for _, c := range cs[max(len(cs)-k, 0):] {
		out = append(out, c.ID)
	}
	return out
}

// An honest hint: two requests, however far back the status comment is,
// and the same status comment and last comments as the timeline.
func TestReadFollowsTheHint(t *testing.T) {
	f := hinted(120, time.Time{})
	f.setHint(f.honest())
	s := read(t, f)
	if !f.twoRequests() || !s.Hinted() {
		t.Fatalf("%d requests, hinted %v", f.s.Requests(), s.Hinted())
	}
	if s.Status == nil || s.Status.ID != 200 || !slices.Equal(lastIDs(s.Recent.Comments, 3), []int64{418, 419, 420}) || len(s.Older) != 1 {
		t.Errorf("status %v, recent %v, older %d", s.Status, lastIDs(s.Recent.Comments, 3), len(s.Older))
	}
	if h := s.Hint(3); h.Missed || !h.At.Equal(f.honest()) {
		t.Errorf("hint %+v, want the same time and no miss", h)
	}
}

// A hint an agent moved or removed costs a bounded read, never a comment:
// the run reads what the timeline holds, and knows the hint missed.
func TestReadHintEditedReadsTheTimeline(t *testing.T) {
	timeline := read(t, hinted(120, time.Time{}))
	for name, f := range map[string]hintedIssue{
		"removed":         hinted(120, time.Time{}),
		"in the future":   hinted(120, written.Add(48*time.Hour)),
		"at the epoch":    hinted(120, time.Unix(0, 0)),
		"after deletions": deleted(hinted(120, time.Time{}), 2),
	} {
		t.Run(name, func(t *testing.T) {
			s := read(t, f)
			if s.Followed() || !s.Hint(3).Missed {
				t.Errorf("followed %v, missed %v after %d requests", s.Followed(), s.Hint(3).Missed, f.s.Requests())
			}
			if s.Status == nil || s.Status.ID != timeline.Status.ID || !slices.Equal(lastIDs(s.Recent.Comments, 3), lastIDs(f.comments(), 3)) {
				t.Errorf("status %v, recent %v", s.Status, lastIDs(s.Recent.Comments, 3))
			}
			if f.s.Requests() > 2+MaxStatusPages+1 {
				t.Errorf("%d requests", f.s.Requests())
			}
		})
	}
}

// deleted is f with an honest hint (four comments after its time), and
// then k of the last comments deleted.
func deleted(f hintedIssue, k int) hintedIssue {
	f.setHint(f.honest())
	cs := f.comments()
	for _, c := range cs[len(cs)-3 : len(cs)-3+k] {
		f.s.RemoveComment(c.ID)
	}
	return f
}

// A deletion that leaves the window's comments after the hint's time
// leaves the proof standing: they are still the last ones.
func TestReadHintAfterADeletion(t *testing.T) {
	f := deleted(hinted(120, time.Time{}), 1)
	s := read(t, f)
	if !s.Hinted() || !slices.Equal(lastIDs(s.Recent.Comments, 3), lastIDs(f.comments(), 3)) {
		t.Errorf("hinted %v, recent %v, want %v", s.Hinted(), lastIDs(s.Recent.Comments, 3), lastIDs(f.comments(), 3))
	}
}

// At or before the opening, the hint reads every comment in one request,
// as long as they are few.
func TestReadHintAtTheOpening(t *testing.T) {
	f := hinted(10, opened)
	s := read(t, f)
	if !f.twoRequests() || !s.Whole() || len(s.Recent.Comments) != 14 {
		t.Errorf("%d requests, whole %v, %d comments", f.s.Requests(), s.Whole(), len(s.Recent.Comments))
	}
}

// Governance labels that moved since the record are read on the timeline
// (who moved them is there): not the hint's miss.
func TestReadHintLabelsMoved(t *testing.T) {
	f := hinted(120, time.Time{})
	f.setHint(f.honest())
	f.s.Change(7, func(is *issues.Issue) { is.Labels = []issues.Label{{ID: 5, Name: "cascade::depth-9"}} })
	s := read(t, f)
	if s.Followed() || s.Hint(3).Missed || s.Status == nil {
		t.Errorf("followed %v, missed %v, status %v", s.Followed(), s.Hint(3).Missed, s.Status)
	}
	if f.s.Calls("CommentsSince") != 1 || f.s.Calls("RecentComments") == 0 {
		t.Errorf("%d requests for the comments since the hint and %d for the timeline, want 1 and then the timeline", f.s.Calls("CommentsSince"), f.s.Calls("RecentComments"))
	}
}
