package live

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
)

// sinceForge is fakeForge that also answers the comments updated since a
// time, in one request, as Gitea does (whole seconds, every comment).
type sinceForge struct{ *fakeForge }

func (f sinceForge) CommentsSince(_ context.Context, _ int64, t time.Time) ([]issues.Comment, error) {
	var out []issues.Comment
	for _, c := range f.comments {
		if !c.UpdatedAt.Before(t.Truncate(time.Second)) || t.Unix() <= 0 {
			out = append(out, c)
		}
	}
	return out, f.note("since")
}

var opened = written.Add(-time.Hour)

// hinted is an issue opened before the guard's first run, with the status
// comment (200) near its start, last updated before the last three of the
// n comments after it, one a minute; its body carries the hint at, when
// not zero.
func hinted(n int, at time.Time) sinceForge {
	st := status(200, issues.ActionsUser, issues.ActionsUser, nil, nil)
	st.CreatedAt, st.UpdatedAt = written, written.Add(time.Duration(n-3)*time.Minute)
	f := issueWith(st)
	f.issue.CreatedAt = opened
	for i := range f.comments[:3] {
		f.comments[i].CreatedAt, f.comments[i].UpdatedAt = opened, opened
	}
	for i := 1; i <= n; i++ {
		t := written.Add(time.Duration(i) * time.Minute)
		f.comments = append(f.comments, issues.Comment{ID: int64(300 + i), Author: "alice", Body: "noise", CreatedAt: t, UpdatedAt: t})
	}
	if !at.IsZero() {
		f.issue.Body = checkpoint.WithHint(body, at, 0)
	}
	return sinceForge{f}
}

// honest is the hint the guard or report would write on f.
func (f sinceForge) honest() time.Time {
	return guard.HintAt(f.comments, false, opened, &f.comments[3], 3)
}

func read(t *testing.T, f sinceForge) *Snapshot {
	t.Helper()
	r := &Reader{Forge: f, Guard: issues.ActionsUser}
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
	f.issue.Body = checkpoint.WithHint(body, f.honest(), 0)
	s := read(t, f)
	if !slices.Equal(f.requests, []string{"issue", "since"}) || !s.Hinted() {
		t.Fatalf("requests %v, hinted %v", f.requests, s.Hinted())
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
	for name, f := range map[string]sinceForge{
		"removed":         hinted(120, time.Time{}),
		"in the future":   hinted(120, written.Add(48*time.Hour)),
		"at the epoch":    hinted(120, time.Unix(0, 0)),
		"after deletions": deleted(hinted(120, time.Time{}), 2),
	} {
		t.Run(name, func(t *testing.T) {
			s := read(t, f)
			if s.Followed() || !s.Hint(3).Missed {
				t.Errorf("followed %v, missed %v after %v", s.Followed(), s.Hint(3).Missed, f.requests)
			}
			if s.Status == nil || s.Status.ID != timeline.Status.ID || !slices.Equal(lastIDs(s.Recent.Comments, 3), lastIDs(f.comments, 3)) {
				t.Errorf("status %v, recent %v", s.Status, lastIDs(s.Recent.Comments, 3))
			}
			if len(f.requests) > 2+MaxStatusPages+1 {
				t.Errorf("%d requests", len(f.requests))
			}
		})
	}
}

// deleted is f with an honest hint (four comments after its time), and
// then k of the last comments deleted.
func deleted(f sinceForge, k int) sinceForge {
	f.issue.Body = checkpoint.WithHint(body, f.honest(), 0)
	f.comments = slices.Delete(f.comments, len(f.comments)-3, len(f.comments)-3+k)
	return f
}

// A deletion that leaves the window's comments after the hint's time
// leaves the proof standing: they are still the last ones.
func TestReadHintAfterADeletion(t *testing.T) {
	f := deleted(hinted(120, time.Time{}), 1)
	s := read(t, f)
	if !s.Hinted() || !slices.Equal(lastIDs(s.Recent.Comments, 3), lastIDs(f.comments, 3)) {
		t.Errorf("hinted %v, recent %v, want %v", s.Hinted(), lastIDs(s.Recent.Comments, 3), lastIDs(f.comments, 3))
	}
}

// At or before the opening, the hint reads every comment in one request,
// as long as they are few.
func TestReadHintAtTheOpening(t *testing.T) {
	f := hinted(10, opened)
	s := read(t, f)
	if !slices.Equal(f.requests, []string{"issue", "since"}) || !s.Whole() || len(s.Recent.Comments) != 14 {
		t.Errorf("requests %v, whole %v, %d comments", f.requests, s.Whole(), len(s.Recent.Comments))
	}
}

// Governance labels that moved since the record are read on the timeline
// (who moved them is there): not the hint's miss.
func TestReadHintLabelsMoved(t *testing.T) {
	f := hinted(120, time.Time{})
	f.issue.Body = checkpoint.WithHint(body, f.honest(), 0)
	f.issue.Labels = []issues.Label{{ID: 5, Name: "cascade::depth-9"}}
	s := read(t, f)
	if s.Followed() || s.Hint(3).Missed || s.Status == nil {
		t.Errorf("followed %v, missed %v, status %v", s.Followed(), s.Hint(3).Missed, s.Status)
	}
	if len(f.requests) < 3 || f.requests[1] != "since" || f.requests[2] != "timeline" {
		t.Errorf("requests %v", f.requests)
	}
}
