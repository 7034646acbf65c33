package action_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// notifications returns the subjects of the unread notifications of the
// user of token.
func notifications(t *testing.T, f *actiontest.Repo, token string) []string {
	t.Helper()
	var ns []struct {
		Subject struct {
			Title string `json:"title"`
			URL   string `json:"html_url"`
		} `json:"subject"`
	}
	f.API(t, token, http.MethodGet, "/notifications?all=true", nil, &ns)
	var out []string
	for _, n := range ns {
		out = append(out, n.Subject.Title+" "+n.Subject.URL)
	}
	return out
}

// digestIssue is an issue agent posts results on: n, the results posted
// (comment ids, in order), the last one's event, and post, which posts
// result i (the fourth's footer hostile: a table row, a mention of the
// victim, code and HTML).
type digestIssue struct {
	n       int64
	results []int64
	d       actiontest.Delivery
	post    func(i int)
}

// openDigestIssue opens the issue; no result is posted yet.
func openDigestIssue(t *testing.T, f fixture, agent actiontest.User, victim string) *digestIssue {
	t.Helper()
	di := &digestIssue{}
	di.n, _ = f.Open(t, t.Name(), func(n int64) string {
		return checkpointBody(n, "cascade::depth-2, size::medium", shortTail, 1000)
	}, "cascade::depth-2", "size::medium")
	di.post = func(i int) {
		t.Helper()
		name := []string{"lead-developer", "code-reviewer"}[i%2]
		fields := map[string]any{"status": "done", "verdict": fmt.Sprintf("approve-%d", i)}
		fields["key_stats"] = map[string]any{"tests_added": 10 + i, "coverage_pct": 87.4}
		if i == 3 {
			// Footers are the agents' text: the digest must neutralise it.
			fields["verdict"] = "approve | forged | row |\n| 9 | x"
			fields["key_stats"] = "cc @" + victim + " `rm -rf /` <b>bold</b>"
		}
		var id int64
		id, di.d = f.Comment(t, di.n, agent, result(t, name, "implementation", 1, fields))
		di.results = append(di.results, id)
	}
	return di
}

// TestCompletionDigest: after digest-after (5) results the guard posts one
// compact digest, a row per result with its footer's figures and a link to
// the full comment; a re-run and the next result post no second one. A
// hostile footer neither breaks the table nor mentions anyone.
func TestCompletionDigest(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	victim := f.User(t, "victim", giteatest.PermRead).Login
	di := openDigestIssue(t, f, agent, victim)
	n := di.n
	for i := range 4 {
		di.post(i)
	}
	r := f.Run(t, di.d)
	r.Expect(t, 0, "pass")
	r.ExpectRules(t)
	if got := f.GuardComments(t, n, actiontest.DigestMarker(n)); len(got) != 0 {
		t.Fatalf("a digest after 4 results:\n%s", got[0].Body)
	}

	di.post(4)
	r = f.Run(t, di.d)
	r.Expect(t, 0, "pass")
	r.ExpectRules(t)
	digests := f.GuardComments(t, n, actiontest.DigestMarker(n))
	if len(digests) != 1 {
		t.Fatalf("%d digests after 5 results, want 1\n%s", len(digests), r.String())
	}
	dg := digests[0].Body
	if !strings.HasPrefix(dg, "## GNS-2 Completion Digest\n") {
		t.Errorf("the digest does not start with its heading:\n%s", dg)
	}
	urls := map[int64]string{}
	for _, c := range f.Comments(t, n) {
		urls[c.ID] = c.HTMLURL
	}
	row := regexp.MustCompile(`(?m)^\| (\d+) \| (.*) \| \[comment\]\(([^)\s]+)\) \|$`)
	rows := row.FindAllStringSubmatch(dg, -1)
	if len(rows) != 5 || strings.Count(dg, "\n| ") != 6 {
		t.Fatalf("want a header and 5 rows, found %d well-formed rows:\n%s", len(rows), dg)
	}
	for i, m := range rows {
		want := urls[di.results[i]]
		if m[1] != fmt.Sprint(i+1) || want == "" || m[3] != want {
			t.Errorf("row %d links %q, want the result comment %d at %q", i+1, m[3], di.results[i], want)
		}
		if i != 3 && !strings.Contains(m[2], fmt.Sprintf("| done | approve-%d | 1 | coverage\\_pct=87.4, tests\\_added=%d", i, 10+i)) {
			t.Errorf("row %d does not show the footer's status, verdict, files and key stats:\n%s", i+1, m[0])
		}
	}
	if strings.Contains(dg, "@"+victim) || strings.Contains(dg, "`") || strings.Contains(dg, "<b>") {
		t.Errorf("the hostile footer reached the digest raw:\n%s", dg)
	}

	// A re-run of the same event, then a sixth result: still one digest.
	r = f.Run(t, di.d)
	r.Expect(t, 0, "pass")
	r.ExpectRules(t)
	di.post(5)
	r = f.Run(t, di.d)
	r.Expect(t, 0, "pass")
	r.ExpectRules(t)
	if got := f.GuardComments(t, n, actiontest.DigestMarker(n)); len(got) != 1 || got[0].Body != dg {
		t.Errorf("%d digests after a re-run and a sixth result, want the first one unchanged", len(got))
	}
	for _, w := range r.Writes {
		if strings.Contains(w, "digest") {
			t.Errorf("the run after the digest wrote: %s", w)
		}
	}
}

// TestCompletionDigestNotifiesNobody: the hostile footer's mention, as the
// digest carries it, notifies nobody on Gitea.
func TestCompletionDigestNotifiesNobody(t *testing.T) {
	f := newFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	victim, victimTok := actiontest.Collaborator(t, f.S, f.Owner, f.Name, "victim", giteatest.PermRead)
	di := openDigestIssue(t, f, agent, victim)
	for i := range 4 {
		di.post(i)
	}
	before := len(notifications(t, f, victimTok))
	di.post(4)
	r := f.Run(t, di.d)
	r.Expect(t, 0, "pass")
	if got := f.GuardComments(t, di.n, actiontest.DigestMarker(di.n)); len(got) != 1 {
		t.Fatalf("%d digests after 5 results, want 1\n%s", len(got), r.String())
	}
	// Gitea notifies from a queue: once a later comment's mention has
	// reached a witness, a mention in the digest would have reached the victim.
	witness, witnessTok := actiontest.Collaborator(t, f.S, f.Owner, f.Name, "witness", giteatest.PermRead)
	f.API(t, f.S.AdminToken, http.MethodPost, f.Path("/issues/%d/comments", di.n), map[string]string{"body": "cc @" + witness}, nil)
	f.Runs.Next(t, actiontest.From("issue_comment", "created", di.n, f.S.AdminLogin))
	deadline := time.Now().Add(30 * time.Second)
	for len(notifications(t, f, witnessTok)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s was not notified of a plain mention within 30s", witness)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := notifications(t, f, victimTok); len(got) != before {
		t.Errorf("%s got a notification from the digest: %v", victim, got)
	}
}
