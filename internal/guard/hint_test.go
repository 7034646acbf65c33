package guard

import (
	"github.com/gns-guard/gns-guard/internal/config"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/issues"
)

var opened = time.Date(2026, 5, 16, 12, 0, 0, 0, time.UTC)

// thread is n comments, one a minute from opened+1m, ids 1..n; updated
// when created.
func thread(n int) []issues.Comment {
	var cs []issues.Comment
	for i := 1; i <= n; i++ {
		at := opened.Add(time.Duration(i) * time.Minute)
		cs = append(cs, issues.Comment{ID: int64(i), Author: "agent", CreatedAt: at, UpdatedAt: at})
	}
	return cs
}

func ids(cs []issues.Comment) []int64 {
	var out []int64
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

// since is what the forge answers for the comments updated at or after t.
func since(cs []issues.Comment, t time.Time) []issues.Comment {
	return slices.DeleteFunc(slices.Clone(cs), func(c issues.Comment) bool { return c.UpdatedAt.Before(t) })
}

func TestHintAt(t *testing.T) {
	cs := thread(10)
	status := &issues.Comment{ID: 2, UpdatedAt: opened.Add(30 * time.Minute)}
	if got := HintAt(cs, false, opened, status, 3); !got.Equal(cs[7].CreatedAt) {
		t.Errorf("the third newest's creation: got %v, want %v", got, cs[7].CreatedAt)
	}
	status.UpdatedAt = opened.Add(5*time.Minute + 500*time.Millisecond)
	if got := HintAt(cs, false, opened, status, 3); !got.Equal(opened.Add(5 * time.Minute)) {
		t.Errorf("never after the status comment's update (whole seconds): got %v", got)
	}
	if got := HintAt(cs[:2], true, opened, nil, 3); !got.Equal(opened) {
		t.Errorf("fewer than the window, all read: the opening; got %v", got)
	}
	if got := HintAt(cs[:2], false, opened, nil, 3); !got.IsZero() {
		t.Errorf("too few read to say: got %v", got)
	}
	// Ordered by creation, as the timeline orders them, not by id.
	swapped := slices.Clone(cs)
	swapped[9].CreatedAt, swapped[9].ID = opened, 99
	if got := HintAt(swapped, false, opened, nil, 3); !got.Equal(cs[6].CreatedAt) {
		t.Errorf("by creation: got %v, want %v", got, cs[6].CreatedAt)
	}
}

// The proof holds exactly when the answer must hold the last comments;
// a hint moved anywhere never makes a comment go missing unnoticed.
func TestProveHint(t *testing.T) {
	cs := thread(10)
	x := HintAt(cs, false, opened, nil, 3) // comment 8's creation
	recent, older, all, ok := ProveHint(since(cs, x), x, opened, 3)
	if !ok || all || !slices.Equal(ids(recent), []int64{8, 9, 10}) || len(older) != 0 {
		t.Fatalf("an honest hint: recent %v older %v all %v ok %v", ids(recent), ids(older), all, ok)
	}
	// Later comments only add to it.
	if recent, _, _, ok := ProveHint(since(thread(12), x), x, opened, 3); !ok || !slices.Equal(ids(recent), []int64{8, 9, 10, 11, 12}) {
		t.Errorf("with later comments: %v %v", ids(recent), ok)
	}
	// A comment deleted since leaves too few: the timeline is read.
	deleted := slices.Delete(slices.Clone(cs), 8, 9)
	if _, _, _, ok := ProveHint(since(deleted, x), x, opened, 3); ok {
		t.Error("a comment deleted since the hint still proved the read")
	}
	// An older comment edited since is judged, not taken for a last one.
	edited := slices.Clone(cs)
	edited[2].UpdatedAt = opened.Add(time.Hour)
	if recent, older, _, ok := ProveHint(since(edited, x), x, opened, 3); !ok || !slices.Equal(ids(recent), []int64{8, 9, 10}) || !slices.Equal(ids(older), []int64{3}) {
		t.Errorf("an older comment edited since: recent %v older %v ok %v", ids(recent), ids(older), ok)
	}
	// A hint moved to the future answers nothing that proves.
	future := opened.Add(24 * time.Hour)
	if _, _, _, ok := ProveHint(since(cs, future), future, opened, 3); ok {
		t.Error("a future hint proved the read")
	}
	// At or before the opening: every comment, whatever their number.
	for _, at := range []time.Time{opened, time.Unix(0, 0), {}} {
		recent, _, all, ok := ProveHint(cs, at, opened, 3)
		if !ok || !all || len(recent) != 10 {
			t.Errorf("a hint at %v: %d comments, all %v, ok %v", at, len(recent), all, ok)
		}
		if _, _, _, ok := ProveHint(cs[:1], at, opened, 3); !ok {
			t.Errorf("a hint at %v on a short issue did not prove", at)
		}
	}
	// An answer too large to judge is not used.
	long := thread(MaxHintComments + 1)
	if _, _, _, ok := ProveHint(long, opened, opened, 3); ok {
		t.Errorf("an answer of %d comments was used", len(long))
	}
}

// A run whose read missed the hint, and which accepts the state with
// nothing to fix, writes it: one compare-and-swap write of the hint line
// alone, counted in the content version the ledger records. The next run,
// on the body it leaves, writes nothing.
func TestHintWrittenAfterAMissedRead(t *testing.T) {
	in := trusted(t, 4)
	at := opened.Add(time.Hour)
	in.Hint = Hint{At: at, Missed: true}
	p := Decide(in)
	if len(p.Violations) != 0 || p.Hint == nil {
		t.Fatalf("violations %v, hint %+v", ruleIDs(p), p.Hint)
	}
	if got, _ := checkpoint.Hint(p.Hint.Body, 0); !got.Equal(at) || strings.Replace(p.Hint.Body, checkpoint.HintLine(at)+"\n", "", 1) != in.Issue.Body {
		t.Errorf("the body written: %q", p.Hint.Body)
	}
	ws := p.Writes()
	if len(ws) != 1 || ws[0].Kind != WriteHint || !strings.Contains(ws[0].Planned(), "2026-05-16T13:00:00Z") {
		t.Errorf("writes %v", ws)
	}
	if p.Ledger == nil || p.Ledger.ContentVersion != 5 {
		t.Errorf("the ledger records content version %d, want 5 (the hint's write)", p.Ledger.ContentVersion)
	}
	next := in.After(Change{Body: &p.Hint.Body})
	withLedger(&next, *p.Ledger)
	if next.Hint.Missed {
		t.Error("the next run still counts the hint as missed")
	}
	if np := Decide(next); np.Hint != nil || len(np.Writes()) != 0 {
		t.Errorf("the next run writes %v", np.Writes())
	}
}

// No hint write where it would not help or must not happen.
func TestHintNotWritten(t *testing.T) {
	at := opened.Add(time.Hour)
	cases := map[string]func(in *Input){
		"the read followed the hint": func(in *Input) { in.Hint.Missed = false },
		"the time is not known":      func(in *Input) { in.Hint.At = time.Time{} },
		"a violation to fix":         func(in *Input) { in.Issue.Body = body("depth: 1", "depth: 3") },
		"the body has it already": func(in *Input) {
			in.Issue.Body = checkpoint.WithHint(in.Issue.Body, at, 0)
		},
	}
	for name, edit := range cases {
		in := trusted(t, 4)
		in.Hint = Hint{At: at, Missed: true}
		edit(&in)
		if p := Decide(in); p.Hint != nil {
			t.Errorf("%s: the hint is written: %v", name, p.Writes())
		}
	}
}

// A body the guard writes anyway carries the hint of its read; without
// one (an offline check) it keeps the hint the body had, once.
func TestBodyWritesCarryTheHint(t *testing.T) {
	at := opened.Add(time.Hour)
	in := input(t, body("issue: 9", "issue: 0"), "cascade::depth-2")
	in.Event = issues.Event{Name: "issues", Action: "opened", Number: 9, Sender: "alice"}
	in.Hint = Hint{At: at, Missed: true}
	p := Decide(in)
	if p.Fill == nil || p.Hint != nil {
		t.Fatalf("fill %+v hint %+v: want the fill alone", p.Fill, p.Hint)
	}
	if got, ok := checkpoint.Hint(p.Fill.Body, 0); !ok || !got.Equal(at) {
		t.Errorf("the filled body's hint: %v %v", got, ok)
	}
	if p.Ledger.ContentVersion != 1 {
		t.Errorf("content version %d: one write, one version", p.Ledger.ContentVersion)
	}
	old := opened.Add(time.Minute)
	in.Hint = Hint{}
	in.Issue.Body = checkpoint.WithHint(body("issue: 9", "issue: 0"), old, 0)
	in.Issue.Body = strings.Replace(in.Issue.Body, "```yaml\n", "```yaml\n"+checkpoint.HintLine(at)+"\n", 1)
	p = Decide(in)
	if got, _ := checkpoint.Hint(p.Fill.Body, 0); !got.Equal(old) || strings.Count(p.Fill.Body, "comments since") != 1 {
		t.Errorf("the hint kept once: %q", p.Fill.Body)
	}
}

// A run that posts the status comment anew at the end (the old one had
// fallen out of reach) writes a hint the old comment does not hold back:
// bounded by a comment the run deletes, the next read would answer with
// every comment since. A status comment in reach still bounds it.
func TestHintAfterTheStatusCommentMoves(t *testing.T) {
	cs := thread(10)
	h := Hint{At: opened.Add(time.Minute), Moved: cs[7].CreatedAt, Missed: true}
	e := &decision{in: Input{Recent: cs, Hint: h}, cfg: config.Default()}
	for _, c := range []struct {
		status int
		want   time.Time
	}{{1, h.Moved}, {4, h.Moved}, {5, h.At}, {10, h.At}} { // the default window is 7
		e.in.Status = &cs[c.status-1]
		if got := e.hintAt(); !got.Equal(c.want) {
			t.Errorf("status comment %d of 10, window %d: hint %v, want %v", c.status, e.cfg.RecentWindow(), got, c.want)
		}
	}
	e.in.Status = &issues.Comment{ID: 99} // not among the comments read
	if got := e.hintAt(); !got.Equal(h.Moved) {
		t.Errorf("a status comment out of reach: hint %v, want %v", got, h.Moved)
	}
}
