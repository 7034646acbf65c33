package cli_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

const hintLedgerKey = "7d2c1b0a99887766554433221100ffeeddccbbaa99887766554433221100ffee" // 256 bits

// hintLine is the read hint line of a body, its line end included.
var hintLine = regexp.MustCompile(`(?m)^# gns-guard: comments since (\S+)\n`)

// TestReportKeepsTheHintFresh: ten honest steps of `report`, the guard run
// on every event each step records, then label noise (an Actions job
// toggling labels, say): after every step's noise a clean pass costs two
// requests, without an anchor, because each report wrote a fresh read
// hint in its own body write (docs/ledger.md#the-read-hint). The guard
// never writes the hint itself along the way.
func TestReportKeepsTheHintFresh(t *testing.T) {
	r := actiontest.NewRepo(t)
	f := &flow{r: r, agent: r.User(t, "agent", giteatest.PermWrite)}
	guard := []string{"ledger-key", hintLedgerKey}
	n, d := r.Open(t, "rate limits", func(n int64) string { return issueWithBudget(n, 60000, "cascade::depth-2, size::medium") }, "cascade::depth-2", "size::medium")
	f.n = n
	if res := r.Step(guard...).RunInProcess(t, d, actiontest.InProcess{}); res.Code != 0 {
		t.Fatalf("the guard's first run: %s", res)
	}
	ids := actiontest.LabelIDs(t, r.S, r.Owner, r.Name, "noise-a", "noise-b")
	agents := []string{"lead-developer", "code-reviewer"}
	var first, last time.Time
	for i := 1; i <= 10; i++ {
		stdout, stderr, code := f.report(t, "--agent", agents[i%2], "--invocation", fmt.Sprintf("inv-%d", i), "--consumed", "800",
			"--action", fmt.Sprintf("step %d", i), "--next-agent", agents[(i+1)%2], "--next-estimate", "2000", "--format", "json")
		if code != 0 {
			t.Fatalf("step %d: report exit %d\n%s\n%s", i, code, stdout, stderr)
		}
		for _, res := range f.guard(t, guard...) {
			if res.Code != 0 {
				t.Fatalf("step %d: the guard failed a run:\n%s", i, res)
			}
			for _, w := range res.Writes {
				if strings.HasPrefix(w, "wrote the read hint") {
					t.Errorf("step %d: the guard wrote the hint after an honest report: %q", i, res.Writes)
				}
			}
		}
		m := hintLine.FindStringSubmatch(f.body(t))
		if m == nil {
			t.Fatalf("step %d: the body has no read hint:\n%s", i, f.body(t))
		}
		at, err := time.Parse(time.RFC3339, m[1])
		if err != nil || at.Before(last) {
			t.Errorf("step %d: the hint %s went back from %s", i, m[1], last.Format(time.RFC3339))
		}
		if i == 1 {
			first = at
		}
		last = at
		noise := noiseOn(t, r, n, ids, 30)
		res := r.Step(guard...).RunInProcess(t, noise, actiontest.InProcess{})
		if res.Code != 0 || res.Requests != 2 || len(res.Writes) != 0 || !strings.Contains(res.Stdout, "through the read hint") {
			t.Errorf("step %d: the clean pass after 30 label events: exit %d, %d requests, writes %q; want 0, 2 and none, through the read hint\n%s", i, res.Code, res.Requests, res.Writes, res.Stdout)
		}
	}
	// The window's comments moved on, and only report wrote the hint.
	if !last.After(first) {
		t.Errorf("the hint stayed at %s over ten steps", first.Format(time.RFC3339))
	}
}

// noiseOn adds and removes the labels ids on issue n, events times in all,
// as the owner, and takes the runs they record: it returns the last.
func noiseOn(t *testing.T, r *actiontest.Repo, n int64, ids []int64, events int) actiontest.Delivery {
	t.Helper()
	for i := 0; i < events/2; i++ {
		id := ids[i%len(ids)]
		r.API(t, r.S.AdminToken, http.MethodPost, r.Path("/issues/%d/labels", n), map[string]any{"labels": []int64{id}}, nil)
		r.API(t, r.S.AdminToken, http.MethodDelete, r.Path("/issues/%d/labels/%s", n, strconv.FormatInt(id, 10)), nil, nil)
	}
	last := r.Runs.Next(t, actiontest.From("issues", "label_updated", n, r.S.AdminLogin))
	for _, p := range r.Runs.Pending(t) {
		if p.Sender == r.S.AdminLogin {
			last = r.Runs.Next(t, func(d actiontest.Delivery) bool { return d.Run == p.Run })
		}
	}
	return last
}
