package forge_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/issues"
)

// A flood of label events costs a bounded number of requests, the same for
// 2,000 as for 20,000, and the status comment and the label events at the
// end are found. An issue whose tail is comments keeps its one request.
func TestRecentCommentsLabelFlood(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	comments := []string{"first", "second", "third"}
	const n = 3 // the action's recent window

	type outcome struct {
		requests int64
		page     issues.CommentPage
	}
	run := func(events int) outcome {
		t.Helper()
		began := time.Now()
		owner, repo, number := f.srv.SeedIssueEvents(t, fmt.Sprintf("%d label events", events), "", comments, events)
		seeded := time.Since(began)
		c, err := forge.New(f.srv.URL, f.srv.AdminToken, owner, repo)
		if err != nil {
			t.Fatal(err)
		}
		// The guard's status comment and two label changes at the end.
		status, err := c.CreateComment(ctx, number, "status "+issues.StatusMarker(number))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddLabels(ctx, number, []string{"tick"}, nil); err != nil {
			t.Fatal(err)
		}
		is, err := c.Issue(ctx, number)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.RemoveLabel(ctx, number, is.Labels[0]); err != nil {
			t.Fatal(err)
		}
		if is, err = c.Issue(ctx, number); err != nil {
			t.Fatal(err)
		}
		var o outcome
		began = time.Now()
		o.requests = delta(c, func() {
			if o.page, err = c.RecentComments(ctx, is, n); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("3 comments and %d label events (seeded in %s): %d requests in %s, %d comments from offset %d, %d label events, truncated %v",
			events, seeded.Round(time.Millisecond), o.requests, time.Since(began).Round(time.Millisecond),
			len(o.page.Comments), o.page.Start, len(o.page.Labels), o.page.Truncated)
		cs := o.page.Comments
		if len(cs) == 0 || cs[len(cs)-1].ID != status.ID {
			t.Errorf("%d events: the status comment is not the last comment read: %+v", events, cs)
		}
		ls := o.page.Labels
		if len(ls) < 2 || ls[len(ls)-2].Label != "tick" || !ls[len(ls)-2].Added || ls[len(ls)-1].Label != "tick" || ls[len(ls)-1].Added {
			t.Errorf("%d events: the last label events are %+v, want tick added and removed", events, ls)
		}
		return o
	}

	none := run(0)
	if none.requests != 1 || len(none.page.Comments) != 4 || none.page.Start != 0 || none.page.Truncated {
		t.Errorf("no events: %d requests, %d comments from %d (truncated %v); want 1, all 4 from 0", none.requests, len(none.page.Comments), none.page.Start, none.page.Truncated)
	}
	some := run(2000)
	flood := run(20000)
	for _, o := range []outcome{some, flood} {
		// The three comments lie behind the events, beyond the page budget.
		if !o.page.Truncated || o.page.Start == 0 {
			t.Errorf("flooded: truncated %v from %d; want truncated, not from 0", o.page.Truncated, o.page.Start)
		}
	}
	// Bounded: the search for the end grows with the logarithm of the
	// events, the read back is a fixed budget; never near the 401 pages
	// of reading forward.
	if flood.requests > 30 || flood.requests-some.requests > 8 {
		t.Errorf("%d requests with 2,000 events, %d with 20,000", some.requests, flood.requests)
	}
}

// An answer over the cap fails with an error naming the request, whether
// the client decodes it or the SDK does, announced or not; the issue's
// answer is read up to the cut instead, and the rest asked apart.
func TestAnswerCap(t *testing.T) {
	const limit = 1 << 10
	big := `{"permission":"` + strings.Repeat("x", limit) + `"}`
	exact := `{"permission":"` + strings.Repeat("x", limit-len(`{"permission":""}`)) + `"}`
	chunked := false
	answer := big
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if chunked {
			w.(http.Flusher).Flush() // no Content-Length
		}
		switch r.URL.Path {
		case "/api/v1/repos/o/r/issues/1":
			io.WriteString(w, `{"number":1,"title":"t","body":"`+strings.Repeat(`\u003c`, limit)+`","labels":[{"id":3,"name":"l"}],"content_version":4}`)
		case "/api/v1/repos/o/r/issues/1/labels":
			io.WriteString(w, `[{"id":3,"name":"l"}]`)
		case "/api/v1/repos/o/r":
			io.WriteString(w, `{"id":7,"owner":{"login":"o"}}`)
		default:
			io.WriteString(w, answer)
		}
	}))
	defer srv.Close()
	c, err := forge.New(srv.URL, "tok", "o", "r", forge.WithMaxAnswer(limit))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const permission = "/api/v1/repos/o/r/collaborators/u/permission"
	for _, ch := range []bool{false, true} {
		chunked = ch
		answer = big
		_, err := c.IsRepoAdmin(ctx, "u")
		var tl *forge.TooLargeError
		if !errors.As(err, &tl) || tl.Path != permission || tl.Method != http.MethodGet || unreachable(err) {
			t.Errorf("chunked %v: an answer over the cap: %v", ch, err)
		} else if !strings.Contains(err.Error(), "GET "+permission) || !strings.Contains(err.Error(), "longer than 1024 bytes") {
			t.Errorf("error message: %v", err)
		}
		_, err = c.CreateComment(ctx, 1, "hi") // through the SDK
		if !errors.As(err, &tl) || tl.Path != "/api/v1/repos/o/r/issues/1/comments" {
			t.Errorf("chunked %v: SDK call over the cap: %v", ch, err)
		}
		answer = exact
		if _, err := c.IsRepoAdmin(ctx, "u"); err != nil {
			t.Errorf("chunked %v: an answer of exactly the cap: %v", ch, err)
		}
		before := c.Requests()
		is, err := c.Issue(ctx, 1)
		if err != nil || !is.BodyTooLarge || is.BodyBytes == 0 || is.Title != "t" || len(is.Labels) != 1 || is.Labels[0].ID != 3 || is.RepoID != 7 || is.RepoOwner != "o" || !is.NoCAS {
			t.Errorf("chunked %v: an issue over the cap: %+v, %v", ch, is, err)
		}
		if n := c.Requests() - before; n != 3 {
			t.Errorf("chunked %v: the issue over the cap took %d requests, want 3", ch, n)
		}
	}
	if forge.MaxAnswer < 50*65536*6 {
		t.Errorf("MaxAnswer %d is below a timeline page of 50 escaped 65,536-character comments", forge.MaxAnswer)
	}
}
