package forge_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/issues"
)

// escapedText is n bytes Gitea writes as 6n in its JSON (\u003c, \u0026,
// \u003e): an agent's cheapest way to an answer over the client's cap.
func escapedText(n int) string {
	return strings.Repeat("<&>", n/3+1)[:n]
}

// postRaw posts a comment with the admin token, reading the answer whole
// (the adapter under test would not), and returns its id.
func (f *fixture) postRaw(t *testing.T, number int64, body string) int64 {
	t.Helper()
	var c struct {
		ID int64 `json:"id"`
	}
	f.rawAPI(t, http.MethodPost, fmt.Sprintf("/repos/%s/%s/issues/%d/comments", f.owner, f.repo, number), map[string]string{"body": body}, &c)
	return c.ID
}

// One comment whose answer is over the cap (8 MiB of escaped text, 48 MiB
// of JSON) and one over the per-comment limit that fits a page (8 MiB of
// plain text), among small comments and label events: the timeline reads,
// the two are marked too large with their id, author and length, and every
// other comment and label event is read, in a bounded number of requests.
func TestTimelineWithHugeComments(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	n := f.newIssue(t, "huge comments", "a body")
	small := func(text string) int64 { return f.postRaw(t, n, text) }
	first := small("first")
	if err := f.fc.AddLabels(ctx, n, []string{"before"}, nil); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	escaped := f.postRaw(t, n, escapedText(8<<20))
	middle := small("middle")
	plain := f.postRaw(t, n, strings.Repeat("x", 8<<20))
	t.Logf("posted two 8 MiB comments in %s", time.Since(began).Round(time.Millisecond))
	if err := f.fc.AddLabels(ctx, n, []string{"after"}, nil); err != nil {
		t.Fatal(err)
	}
	last := small("last " + issues.StatusMarker(n))

	is, err := f.fc.Issue(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	var page issues.CommentPage
	began = time.Now()
	requests := delta(f.fc, func() {
		if page, err = f.fc.RecentComments(ctx, is, 10); err != nil {
			t.Fatalf("RecentComments: %v", err)
		}
	})
	t.Logf("RecentComments: %d requests in %s", requests, time.Since(began).Round(time.Millisecond))
	check := func(what string, cs []issues.Comment, labels []issues.LabelEvent) {
		t.Helper()
		want := []int64{first, escaped, middle, plain, last}
		if got := commentIDs(cs); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: comments %v, want %v", what, got, want)
		}
		for _, c := range cs {
			switch c.ID {
			case escaped, plain:
				if !c.TooLarge || c.Body != "" || c.Author != f.srv.AdminLogin || c.BodyBytes <= issues.MaxCommentBytes || c.HTMLURL == "" {
					t.Errorf("%s: the huge comment %d: too large %v, author %q, %d bytes, body %.20q, link %q", what, c.ID, c.TooLarge, c.Author, c.BodyBytes, c.Body, c.HTMLURL)
				}
			default:
				if c.TooLarge || c.Body == "" || c.Author != f.srv.AdminLogin || c.CreatedAt.IsZero() {
					t.Errorf("%s: comment %d not read whole: %+v", what, c.ID, c)
				}
			}
			if c.ID == plain && c.BodyBytes != 8<<20 {
				t.Errorf("%s: the plain comment is %d bytes, want %d (it was read to its end)", what, c.BodyBytes, 8<<20)
			}
		}
		var names []string
		for _, l := range labels {
			names = append(names, l.Label)
		}
		if fmt.Sprint(names) != "[before after]" {
			t.Errorf("%s: label events %v", what, names)
		}
	}
	check("RecentComments", page.Comments, page.Labels)
	if page.Unread != 0 || page.Truncated || page.Start != 0 {
		t.Errorf("unread %d, truncated %v, start %d", page.Unread, page.Truncated, page.Start)
	}
	// One answer cut at the cap, then the rest of the page from after the
	// entry it was cut in, in pages aligned to their size.
	if requests > 8 {
		t.Errorf("RecentComments made %d requests", requests)
	}

	began = time.Now()
	requests = delta(f.fc, func() {
		if page, err = f.fc.CommentsBefore(ctx, n, forge.PageSize); err != nil {
			t.Fatalf("CommentsBefore: %v", err)
		}
	})
	t.Logf("CommentsBefore: %d requests in %s", requests, time.Since(began).Round(time.Millisecond))
	check("CommentsBefore", page.Comments, page.Labels)
	if requests > 8 {
		t.Errorf("CommentsBefore made %d requests", requests)
	}
}

// An issue whose body is over the per-body limit is read with everything
// else: one request when its answer fits the cap, three when it does not
// (6 MiB of escaped text: a 36 MiB answer), its labels asked apart.
func TestIssueWithHugeBody(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	for _, c := range []struct {
		name     string
		body     string
		requests int64
	}{
		{"plain 2 MiB", strings.Repeat("x", 2<<20), 1},
		{"escaped 6 MiB", escapedText(6 << 20), 3},
	} {
		n := f.newIssue(t, c.name, "short")
		if err := f.fc.AddLabels(ctx, n, []string{"cascade::depth-2", "size::small"}, nil); err != nil {
			t.Fatal(err)
		}
		want, err := f.fc.Issue(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		f.rawAPI(t, http.MethodPatch, fmt.Sprintf("/repos/%s/%s/issues/%d", f.owner, f.repo, n), map[string]string{"body": c.body}, nil)
		var is issues.Issue
		began := time.Now()
		requests := delta(f.fc, func() {
			if is, err = f.fc.Issue(ctx, n); err != nil {
				t.Fatalf("%s: Issue: %v", c.name, err)
			}
		})
		t.Logf("%s: Issue made %d requests in %s", c.name, requests, time.Since(began).Round(time.Millisecond))
		if requests != c.requests {
			t.Errorf("%s: %d requests, want %d", c.name, requests, c.requests)
		}
		if !is.BodyTooLarge || is.Body != "" || is.BodyBytes <= issues.MaxBodyBytes || is.Number != n || is.Title != c.name {
			t.Errorf("%s: too large %v, %d bytes, number %d, title %q", c.name, is.BodyTooLarge, is.BodyBytes, is.Number, is.Title)
		}
		if fmt.Sprint(is.Labels) != fmt.Sprint(want.Labels) || is.RepoID != want.RepoID || is.RepoOwner != want.RepoOwner {
			t.Errorf("%s: labels %v, repository %d %q; want %v, %d %q", c.name, is.Labels, is.RepoID, is.RepoOwner, want.Labels, want.RepoID, want.RepoOwner)
		}
		if c.requests == 1 && (is.NoCAS || is.ContentVersion != want.ContentVersion+1 || is.Comments != want.Comments) {
			t.Errorf("%s: content version %d (no CAS %v), want %d", c.name, is.ContentVersion, is.NoCAS, want.ContentVersion+1)
		}
		if c.requests == 3 && !is.NoCAS {
			t.Errorf("%s: the content version was not read, yet the issue allows compare-and-swap", c.name)
		}
	}
}

// A page whose answer is over the cap because of many entries, each within
// it, is read again from the entry it was cut in: nothing is marked too
// large, nothing is lost.
func TestTimelinePageOverTheCapOfManyEntries(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	n := f.newIssue(t, "many medium comments", "a body")
	var want []int64
	for i := range 8 {
		want = append(want, f.postRaw(t, n, fmt.Sprintf("%d %s", i, strings.Repeat("y", 20<<10))))
	}
	c, err := forge.New(f.srv.URL, f.srv.AdminToken, f.owner, f.repo, forge.WithMaxAnswer(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	is, err := c.Issue(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	var page issues.CommentPage
	requests := delta(c, func() {
		if page, err = c.RecentComments(ctx, is, 10); err != nil {
			t.Fatal(err)
		}
	})
	if fmt.Sprint(commentIDs(page.Comments)) != fmt.Sprint(want) {
		t.Fatalf("comments %v, want %v", commentIDs(page.Comments), want)
	}
	for _, cm := range page.Comments {
		if cm.TooLarge || len(cm.Body) < 20<<10 {
			t.Errorf("comment %d: too large %v, %d bytes read", cm.ID, cm.TooLarge, len(cm.Body))
		}
	}
	t.Logf("8 comments of 20 KiB through a 64 KiB cap: %d requests", requests)
	if requests > 12 {
		t.Errorf("%d requests", requests)
	}
}

// Entries too large to read cost requests, within a budget: when it runs
// out, the entries left are given up and stand in the page as one
// Comment with Unread set. Each of 70 comments of 5 KiB is over a 4 KiB
// cap.
func TestTimelineSplitBudget(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	n := f.newIssue(t, "every entry over the cap", "a body")
	for i := range 70 {
		f.postRaw(t, n, fmt.Sprintf("%d %s", i, strings.Repeat("z", 5<<10)))
	}
	c, err := forge.New(f.srv.URL, f.srv.AdminToken, f.owner, f.repo, forge.WithMaxAnswer(4<<10))
	if err != nil {
		t.Fatal(err)
	}
	is := issues.Issue{Number: n, Comments: 70}
	var page issues.CommentPage
	requests := delta(c, func() {
		if page, err = c.RecentComments(ctx, is, 70); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("70 comments, each over the cap: %d requests, %d comments (%d entries given up)", requests, len(page.Comments), page.Unread)
	if page.Unread == 0 {
		t.Fatal("the budget did not run out")
	}
	var placeholders, tooLarge int
	for _, cm := range page.Comments {
		switch {
		case cm.Unread > 0:
			placeholders++
			if !cm.TooLarge || cm.ID != 0 {
				t.Errorf("a stretch given up: %+v", cm)
			}
		case cm.TooLarge && cm.ID != 0 && cm.Body == "":
			tooLarge++
		default:
			t.Errorf("comment %d read whole through a 4 KiB cap", cm.ID)
		}
	}
	if placeholders == 0 || tooLarge == 0 {
		t.Errorf("%d stretches given up, %d comments marked", placeholders, tooLarge)
	}
	// The pages the read needs, plus the budget (every later page given
	// up at once).
	if requests > 4+forge.MaxSplitRequests {
		t.Errorf("%d requests", requests)
	}
}
