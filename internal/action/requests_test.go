package action_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// A clean pass costs the same few requests on an issue with 1,020 comments
// as on one with 20: the guard reads the tail of the timeline, never the
// whole comment history, and finds its ledger there. (1,020 puts the last
// comments on a page of their own, as 20 does: the read starts at the
// page-aligned offset 1,000.) A run whose accepted state moved spends one
// write more: the status comment's ledger, edited in place.
func TestRequestsDoNotGrowWithComments(t *testing.T) {
	t.Parallel()
	s := giteatest.Require(t)
	for _, count := range []int{20, 1020} {
		comments := make([]string, count)
		for i := range comments {
			comments[i] = fmt.Sprintf("progress note %d", i+1)
		}
		body := actiontest.WithIssue(actiontest.Example(t, "healthy.md", 1), 1)
		owner, repo, n := s.SeedIssue(t, "long thread", body, comments)
		f := actiontest.UseRepo(t, s, owner, repo)
		d := f.AddLabels(t, "issues", n, "cascade::depth-2", "size::medium", "phase::implementation")
		f.Run(t, d).Expect(t, 0, "pass") // the first run posts the ledger
		if f.Issue(t, n).Comments != count+1 {
			t.Fatalf("the seeded issue has %d comments, expected %d and the status comment", f.Issue(t, n).Comments, count)
		}
		r := f.Run(t, d)
		r.Expect(t, 0, "pass")
		if len(r.Writes) != 0 || r.Requests != cleanPassRequests {
			t.Errorf("%d comments: a clean pass made %d requests and wrote %q; expected %d and nothing", count, r.Requests, r.Writes, cleanPassRequests)
		}
		// An agent's progress: the accepted state moves, and the ledger
		// with it, in one more request.
		progress := strings.Replace(f.Issue(t, n).Body, "consumed: 6200", "consumed: 7200", 1)
		progress = strings.Replace(progress, "remaining: 13800", "remaining: 12800", 1)
		r = f.Run(t, f.EditBody(t, n, f.Admin(), progress))
		r.Expect(t, 0, "pass")
		if len(r.Writes) != 1 || !strings.HasPrefix(r.Writes[0], "updated the status comment") || r.Requests != cleanPassRequests+1 {
			t.Errorf("%d comments: progress made %d requests and wrote %q; expected %d and the ledger", count, r.Requests, r.Writes, cleanPassRequests+1)
		}
	}
}

// TestRequestBudgetPerTimeline holds what a run costs on each timeline an
// issue goes through (docs/contract.md#6-reading-the-issue-cheaply): a
// clean pass is cleanPassRequests (two, and GET /user for the personal
// token these steps use) and writes nothing, whoever comments. Each row
// opens an issue as an agent does, runs the guard on it, plays the
// timeline and measures the last run; a feature that adds a read to a
// clean pass shows up here. The one row that costs more is an account the
// guard has never met: its access is checked once (one request) and who
// can write the issue read once (one more), and the record learns both
// (one write, a request too); the account's next comment is a clean pass
// again.
func TestRequestBudgetPerTimeline(t *testing.T) {
	f := newFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	writer := f.User(t, "writer", giteatest.PermWrite)
	stranger := f.Outsider(t, "stranger")
	say := func(n int64, as actiontest.User, what string) actiontest.Delivery {
		_, d := f.Comment(t, n, as, what)
		return d
	}
	rows := []struct {
		name     string
		timeline func(t *testing.T, n int64) actiontest.Delivery // the events before the measured run, and its delivery
		requests int
		writes   []string // prefixes of the writes the measured run makes
	}{
		{"the agent that opened the issue comments", func(t *testing.T, n int64) actiontest.Delivery {
			return say(n, agent, "picked it up: reading the limiter")
		}, cleanPassRequests, nil},
		{"a writer who has not acted on the issue comments", func(t *testing.T, n int64) actiontest.Delivery {
			return say(n, writer, "I can review this once it is ready")
		}, cleanPassRequests, nil},
		{"the agent comments again after the writer", func(t *testing.T, n int64) actiontest.Delivery {
			f.Run(t, say(n, writer, "a first look")).Expect(t, 0, "pass")
			return say(n, agent, "thanks, on it")
		}, cleanPassRequests, nil},
		{"the agent comments after 60 label events", func(t *testing.T, n int64) actiontest.Delivery {
			labelNoise(t, f, n, 60)
			return say(n, agent, "still on it")
		}, cleanPassRequests, nil},
		{"the run after the status comment moved behind 120 comments", func(t *testing.T, n int64) actiontest.Delivery {
			burst(t, f, n, agent, 120)
			r := f.Run(t, say(n, agent, "the last of the burst"))
			r.Expect(t, 0, "pass")
			if !slices.ContainsFunc(r.Writes, func(w string) bool { return strings.HasPrefix(w, "posted the status comment anew at the end") }) {
				t.Fatalf("the status comment did not move: writes %q\n%s", r.Writes, r)
			}
			return say(n, agent, "after the move")
		}, cleanPassRequests, nil},
		{"an account the guard never met comments", func(t *testing.T, n int64) actiontest.Delivery {
			return say(n, stranger, "is this the public API limiter?")
		}, cleanPassRequests + 3, []string{"updated the status comment"}},
		{"that account comments again", func(t *testing.T, n int64) actiontest.Delivery {
			f.Run(t, say(n, stranger, "is this the public API limiter?")).Expect(t, 0, "pass")
			return say(n, stranger, "thanks")
		}, cleanPassRequests, nil},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			n, d := f.OpenAs(t, agent, row.name, example(t, "healthy.md"), governed...)
			f.Run(t, d).Expect(t, 0, "pass")
			r := f.Run(t, row.timeline(t, n))
			r.Expect(t, 0, "pass")
			ok := r.Requests == row.requests && len(r.Writes) == len(row.writes)
			for i := 0; ok && i < len(row.writes); i++ {
				ok = strings.HasPrefix(r.Writes[i], row.writes[i])
			}
			if !ok {
				t.Errorf("%d requests and writes %q; want %d requests and %q\n%s", r.Requests, r.Writes, row.requests, row.writes, r)
			}
		})
	}
}

// burst posts count comments on issue n as one account, several at a
// time, with no guard run between them (their runs were replaced in the
// workflow's concurrency group).
func burst(t *testing.T, f *actiontest.Repo, n int64, as actiontest.User, count int) {
	t.Helper()
	inParallel(t, 4, count, func(_, i int) error {
		body := map[string]string{"body": fmt.Sprintf("burst note %d", i+1)}
		return actiontest.API(t.Context(), f.S, as.Token, http.MethodPost, f.Path("/issues/%d/comments", n), body, nil)
	})
}
