package action_test

import (
	"fmt"
	"testing"

	"github.com/gns-guard/gns-guard/internal/actiontest"
	"github.com/gns-guard/gns-guard/internal/giteatest"
)

// A clean pass costs the same few requests on an issue with 1,020 comments
// as on one with 20: the guard reads the tail of the timeline, never the
// whole comment history. (1,020 puts the last comments on a page of their
// own, as 20 does: the read starts at the page-aligned offset 1,000.)
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
		r := f.Run(t, d)
		r.Expect(t, 0, "pass")
		if f.Issue(t, n).Comments != count {
			t.Fatalf("the seeded issue has %d comments, expected %d", f.Issue(t, n).Comments, count)
		}
		if len(r.Writes) != 0 || r.Requests != cleanPassRequests {
			t.Errorf("%d comments: a clean pass made %d requests and wrote %q; expected %d and nothing", count, r.Requests, r.Writes, cleanPassRequests)
		}
	}
}
