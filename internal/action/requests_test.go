package action_test

import (
	"fmt"
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
