package forge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
)

// row is one entry of a fake timeline.
type row struct {
	id      int64
	kind    string // comment, label, comment_ref
	size    int    // bytes of its body (comment) or of its ref_issue body
	dropped bool   // Gitea leaves it out of the page that holds it
}

// fakeTimeline serves a timeline as Gitea pages it: rows [(page-1)*limit,
// page*limit), then the dropped ones left out; a body is written escaped,
// six bytes a character, as Gitea writes <, > and &.
func fakeTimeline(t *testing.T, rows []row, requests *atomic.Int64) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if !strings.HasSuffix(r.URL.Path, "/timeline") {
			http.NotFound(w, r)
			return
		}
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		if page < 1 || limit < 1 || limit > forge.PageSize {
			t.Errorf("page %d, limit %d", page, limit)
		}
		w.Header().Set("Content-Type", "application/json")
		w.(http.Flusher).Flush()
		var b strings.Builder
		b.WriteString("[")
		first := true
		for i := (page - 1) * limit; i < page*limit && i < len(rows); i++ {
			e := rows[i]
			if e.dropped {
				continue
			}
			if !first {
				b.WriteString(",")
			}
			first = false
			text := strings.Repeat(`\u003c`, e.size)
			switch e.kind {
			case "label":
				fmt.Fprintf(&b, `{"id":%d,"type":"label","user":{"login":"ann"},"body":"1","label":{"id":9,"name":"l%d"}}`, e.id, e.id)
			case "comment_ref":
				fmt.Fprintf(&b, `{"id":%d,"type":"comment_ref","user":{"login":"ann"},"body":"","ref_issue":{"body":"%s"}}`, e.id, text)
			default:
				fmt.Fprintf(&b, `{"id":%d,"type":"comment","html_url":"u%d","user":{"login":"ann"},"body":"%s","created_at":"2026-01-01T00:00:00Z"}`, e.id, e.id, text)
			}
		}
		b.WriteString("]")
		_, _ = w.Write([]byte(b.String()))
	}))
}

// Around entries over the cap, every other entry is read once, in order,
// whatever Gitea dropped from the pages; the comments over the cap are
// marked with their id and author, and the requests stay few.
func TestTimelineAroundEntriesOverTheCap(t *testing.T) {
	const limit = 8 << 10 // the cap: an entry of 2,000 escaped characters (12 KB) is over it
	for _, c := range []struct {
		name     string
		rows     func() []row
		requests int64
	}{
		{"one huge comment", func() []row {
			rs := small(45)
			rs[20].size = 2000
			return rs
		}, 5},
		{"huge comments in a row", func() []row {
			rs := small(45)
			for i := 10; i < 16; i++ {
				rs[i].size = 2000
			}
			return rs
		}, 10},
		{"dropped entries before a huge one", func() []row {
			rs := small(45)
			rs[3].dropped, rs[4].dropped, rs[5].dropped = true, true, true
			rs[20].size = 2000
			rs[30].kind = "label"
			return rs
		}, 6},
		{"a huge cross-reference", func() []row {
			rs := small(45)
			rs[7].kind, rs[7].size = "comment_ref", 2000
			return rs
		}, 6},
		{"medium comments that fill the cap together", func() []row {
			rs := small(30)
			for i := range rs {
				rs[i].size = 300 // 1.8 KB each
			}
			return rs
		}, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows := c.rows()
			var requests atomic.Int64
			srv := fakeTimeline(t, rows, &requests)
			defer srv.Close()
			fc, err := forge.New(srv.URL, "tok", "o", "r", forge.WithMaxAnswer(limit))
			if err != nil {
				t.Fatal(err)
			}
			page, err := fc.CommentsBefore(context.Background(), 1, forge.PageSize)
			if err != nil {
				t.Fatal(err)
			}
			var want, got, huge []int64
			var labels []string
			for _, r := range rows {
				if !r.dropped && r.kind == "comment" {
					want = append(want, r.id)
				}
			}
			for _, cm := range page.Comments {
				got = append(got, cm.ID)
				if cm.TooLarge {
					huge = append(huge, cm.ID)
					if cm.Author != "ann" || cm.Body != "" || cm.BodyBytes == 0 || cm.HTMLURL == "" {
						t.Errorf("comment %d over the cap: %+v", cm.ID, cm)
					}
				} else if len(cm.Body) != rows[cm.ID-1].size {
					t.Errorf("comment %d: %d bytes read, want %d", cm.ID, len(cm.Body), rows[cm.ID-1].size)
				}
			}
			for _, l := range page.Labels {
				labels = append(labels, l.Label)
			}
			if !slices.Equal(got, want) {
				t.Errorf("comments %v\nwant     %v", got, want)
			}
			for _, id := range huge {
				if rows[id-1].size*6 < limit {
					t.Errorf("comment %d marked too large", id)
				}
			}
			for _, r := range rows {
				if r.kind == "label" && !slices.Contains(labels, fmt.Sprintf("l%d", r.id)) {
					t.Errorf("label event %d missing: %v", r.id, labels)
				}
			}
			t.Logf("%d requests", requests.Load())
			if requests.Load() > c.requests {
				t.Errorf("%d requests, want at most %d", requests.Load(), c.requests)
			}
		})
	}
}

func small(n int) []row {
	rs := make([]row, n)
	for i := range rs {
		rs[i] = row{id: int64(i + 1), kind: "comment", size: 5}
	}
	return rs
}

// Every entry over the cap: the budget runs out and the entries left are
// given up, standing in the page as comments with Unread set, which the
// guard reports; no request is made past the budget.
func TestTimelineBudgetRunsOut(t *testing.T) {
	rows := small(150)
	for i := range rows {
		rows[i].size = 2000
	}
	var requests atomic.Int64
	srv := fakeTimeline(t, rows, &requests)
	defer srv.Close()
	fc, err := forge.New(srv.URL, "tok", "o", "r", forge.WithMaxAnswer(8<<10))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var unread, total int
	for _, start := range []int{50, 100, 150} {
		page, err := fc.CommentsBefore(ctx, 1, start)
		if err != nil {
			t.Fatal(err)
		}
		unread += page.Unread
		for _, cm := range page.Comments {
			total += max(cm.Unread, 1)
			if !cm.TooLarge {
				t.Errorf("%+v", cm)
			}
		}
	}
	if total != 150 || unread == 0 {
		t.Errorf("%d entries accounted for, %d given up", total, unread)
	}
	if n := requests.Load(); n != 3+forge.MaxSplitRequests {
		t.Errorf("%d requests, want the 3 pages and %d more", n, forge.MaxSplitRequests)
	}
	// The guard reports what was given up.
	p, err := fc.CommentsBefore(ctx, 1, 150)
	if err != nil {
		t.Fatal(err)
	}
	in := guard.Input{Config: config.Default(), Issue: issues.Issue{Number: 1, Labels: []issues.Label{{ID: 1, Name: "cascade::depth-2"}}}, Event: issues.Event{Name: "issues", Action: "edited", Number: 1}, Recent: p.Comments}
	plan := guard.Decide(in)
	found := false
	for _, v := range plan.Violations {
		found = found || v.Rule == guard.RuleContentTooLarge && strings.Contains(v.Message, "timeline entries were not read")
	}
	if !found {
		b, _ := json.Marshal(plan.Violations)
		t.Errorf("no finding for the entries given up: %s", b)
	}
}
