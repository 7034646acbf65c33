package faulttest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/prune"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
)

// scenario brings an issue to the point where the guard's next run makes
// a write of the kind under test (and prunes, or has pruned, history).
type scenario struct {
	kind writeKind
	// setup opens the issue, runs what must run before, and returns the
	// issue and the delivery the faulty run gets.
	setup func(t *testing.T, f *actiontest.Repo, p *proxy) (int64, actiontest.Delivery)
	// code is the exit code of the run without faults that ends it.
	code int
	// check looks at what a user sees once it is over.
	check func(t *testing.T, f *actiontest.Repo, n int64)
}

// overlongTail is the healthy example with seven history_tail entries,
// past twice history-tail: four are due for the archive.
func overlongTail(t testing.TB) func(int64) string {
	return func(n int64) string { return withTail(t, n, 7) }
}

// editedBy waits for the administrator's next edit of issue n.
func editedBy(t testing.TB, f *actiontest.Repo, n int64) actiontest.Delivery {
	t.Helper()
	return f.Runs.Next(t, func(d actiontest.Delivery) bool {
		return d.Event == "issues" && d.Action == "edited" && d.Number == n && d.Sender == f.S.AdminLogin
	})
}

var scenarios = []scenario{
	{
		kind: postComment,
		setup: func(t *testing.T, f *actiontest.Repo, _ *proxy) (int64, actiontest.Delivery) {
			return f.Open(t, "archive post", overlongTail(t), "cascade::depth-2", "size::medium")
		},
	},
	{
		kind: patchBody,
		setup: func(t *testing.T, f *actiontest.Repo, _ *proxy) (int64, actiontest.Delivery) {
			return f.Open(t, "body patch", overlongTail(t), "cascade::depth-2", "size::medium")
		},
	},
	{
		// A run died after its archive (its body patch failed); then an
		// agent spent budget, so the archive due now differs: the stale
		// one is deleted before the new one is posted.
		kind: deleteComment,
		setup: func(t *testing.T, f *actiontest.Repo, p *proxy) (int64, actiontest.Delivery) {
			n, d := f.Open(t, "stale archive", overlongTail(t), "cascade::depth-2", "size::medium")
			p.inject(patchBody, fault503)
			if r := viaProxy(f, p).Run(t, d); r.Code != 3 {
				t.Fatalf("the run whose body patch failed: exit %d\n%s", r.Code, r.Stdout)
			}
			p.off()
			if got := len(archives(t, f, n)); got != 1 {
				t.Fatalf("%d archive comments after the failed patch, want the 1 posted", got)
			}
			edit(t, f, n, func(body string, cp *doc) string {
				cp.Budget.Consumed += 100
				cp.Budget.Remaining -= 100
				return body
			})
			return n, editedBy(t, f, n)
		},
	},
	{
		// The issue failed a rule before (the status comment says so); an
		// agent fixes it and adds four entries, taking the tail past twice
		// history-tail: the run prunes and resolves the status comment in
		// place.
		kind: patchComment,
		setup: func(t *testing.T, f *actiontest.Repo, _ *proxy) (int64, actiontest.Delivery) {
			n, d := f.Open(t, "status update", func(n int64) string {
				return strings.Replace(withTail(t, n, 3), "next_estimated_tokens: 3500", "next_estimated_tokens: 9000", 1)
			}, "cascade::depth-2", "size::medium")
			if r := f.Step().Run(t, d); r.Code != 1 || !strings.Contains(r.Stdout, "next-over-budget") {
				t.Fatalf("the over-budget estimate: exit %d\n%s", r.Code, r.Stdout)
			}
			edit(t, f, n, func(body string, cp *doc) string {
				cp.NextEstimatedTokens = 1500
				for i := range 4 {
					cp.HistoryTail = append(cp.HistoryTail, entry{Agent: "tester", Action: fmt.Sprintf("fixed estimate %d", i), Timestamp: fmt.Sprintf("2026-05-16T14:0%d:00Z", i)})
				}
				return body
			})
			return n, editedBy(t, f, n)
		},
		check: func(t *testing.T, f *actiontest.Repo, n int64) {
			var status []string
			for _, c := range f.Comments(t, n) {
				if c.User.Login == f.Bot && strings.Contains(c.Body, actiontest.StatusMarker(n)) {
					status = append(status, c.Body)
				}
			}
			if len(status) != 1 || !strings.Contains(status[0], "all clear") {
				t.Errorf("want one status comment, resolved; got %d:\n%s", len(status), strings.Join(status, "\n---\n"))
			}
		},
	},
	{
		// Too deep: the guard labels the issue (creating the label) and
		// prunes all the same.
		kind: labels,
		setup: func(t *testing.T, f *actiontest.Repo, _ *proxy) (int64, actiontest.Delivery) {
			return f.Open(t, "depth label", func(n int64) string {
				body := withTail(t, n, 7)
				cp, err := decode(body)
				if err != nil {
					t.Fatal(err)
				}
				cp.Depth, cp.AgentChain = 3, []string{"orchestrator", "architect", "lead-developer", "tester"}
				body, err = encode(body, cp)
				if err != nil {
					t.Fatal(err)
				}
				return body
			}, "cascade::depth-2", "size::medium")
		},
		code: 1,
		check: func(t *testing.T, f *actiontest.Repo, n int64) {
			var is struct {
				Labels []struct {
					Name string `json:"name"`
				} `json:"labels"`
			}
			f.API(t, f.S.AdminToken, "GET", f.Path("/issues/%d", n), nil, &is)
			var names []string
			for _, l := range is.Labels {
				names = append(names, l.Name)
			}
			if !slices.Contains(names, "cascade::depth-exceeded") {
				t.Errorf("labels %v lack cascade::depth-exceeded", names)
			}
		},
	},
}

// viaProxy is the guard step with its API behind the proxy.
func viaProxy(f *actiontest.Repo, p *proxy) actiontest.Step {
	st := f.Step()
	st.Env["GITHUB_API_URL"] = p.URL + "/api/v1"
	return st
}

// faultClientTimeout is the request timeout of the in-process runs the timeout
// fault is tried on (the binary's is forge.DefaultTimeout, 30 seconds).
const faultClientTimeout = 2 * time.Second

// Faults on every kind of write the guard makes: answered 503, connection
// dropped before or after the server made the write, answer held past the
// client's timeout. The faulty run exits 3 with a message that says what it
// could not do; runs without faults then finish the work, and the history
// is whole, with no archive twice.
func TestFaultsOnEveryWriteLoseNothing(t *testing.T) {
	t.Parallel()
	f := actiontest.NewRepo(t)
	for _, sc := range scenarios {
		for _, ft := range []fault{fault503, faultDrop, faultDropAfter, faultTimeout} {
			t.Run(strings.ReplaceAll(sc.kind.name, " ", "-")+"/"+string(ft), func(t *testing.T) {
				p := newProxy(t, f.S.URL)
				n, d := sc.setup(t, f, p)
				want := entries(mustDecode(t, f.Issue(t, n).Body).HistoryTail)
				archivedBefore := archives(t, f, n)
				var prior []prune.Entry
				for _, a := range archivedBefore {
					prior = append(prior, a.Entries...)
				}
				if len(archivedBefore) > 0 && sc.kind != deleteComment {
					t.Fatalf("setup left %d archive comments", len(archivedBefore))
				}
				if sc.kind == deleteComment {
					prior = nil // the stale archive's entries are still in the body
				}
				want = append(prior, want...)

				ru := p.inject(sc.kind, ft)
				var r actiontest.Result
				if ft == faultTimeout {
					st := viaProxy(f, p)
					r = st.RunInProcess(t, d, actiontest.InProcess{NewForge: actiontest.ForgeWithTimeout(faultClientTimeout)})
				} else {
					r = viaProxy(f, p).Run(t, d)
				}
				p.off()
				out := r.Stdout + r.Stderr
				if p.Hits(ru) == 0 {
					t.Fatalf("the run made no %s request\n%s\nrequests:\n%s", sc.kind.name, out, strings.Join(p.Log(), "\n"))
				}
				if r.Code != 3 || !strings.Contains(out, "gns-guard: could not ") || strings.Contains(out, "panic") || strings.Contains(out, "goroutine ") {
					t.Fatalf("a %s fault on %s: exit %d, want 3 with a message saying what could not be done\n%s\nrequests:\n%s", ft, sc.kind.name, r.Code, out, strings.Join(p.Log(), "\n"))
				}
				t.Logf("exit 3: %s", lastLine(out, "gns-guard: could not "))

				// Runs without faults finish the work; the second has nothing
				// left to prune.
				for i := 1; i <= 2; i++ {
					r = f.Step().Run(t, d)
					if r.Code != sc.code {
						t.Fatalf("re-run %d: exit %d, want %d\n%s", i, r.Code, sc.code, r.Stdout)
					}
				}
				if r.Outputs["pruned"] != "false" {
					t.Errorf("the second re-run pruned again:\n%s", r.Stdout)
				}
				as := archives(t, f, n)
				if dups := duplicateArchives(as); len(dups) > 0 {
					t.Errorf("duplicate archives:\n%s", strings.Join(dups, "\n"))
				}
				if len(as) != 1 {
					t.Errorf("%d archive comments, want 1", len(as))
				}
				sameHistory(t, history(t, f, n), want)
				if tail := mustDecode(t, f.Issue(t, n).Body).HistoryTail; len(tail) != 3 {
					t.Errorf("history_tail holds %d entries after the re-runs, want 3", len(tail))
				}
				if sc.check != nil {
					sc.check(t, f, n)
				}
			})
		}
	}
}

func mustDecode(t testing.TB, body string) *doc {
	t.Helper()
	cp, err := decode(body)
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	return cp
}

// lastLine returns the last line of s holding sub.
func lastLine(s, sub string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], sub) {
			return lines[i]
		}
	}
	return ""
}
