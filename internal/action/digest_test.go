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

// TestCompletionDigest: after digest-after (5) results the guard posts one
// compact digest, a row per result with its footer's figures and a link to
// the full comment; a re-run and the next result post no second one. A
// hostile footer neither breaks the table nor mentions anyone.
func TestCompletionDigest(t *testing.T) {
	f := newFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	victim, victimTok := actiontest.Collaborator(t, f.S, f.Owner, f.Name, "victim", giteatest.PermRead)
	n, _ := f.Open(t, t.Name(), func(n int64) string {
		return checkpointBody(n, "cascade::depth-2, size::medium", shortTail, 1000)
	}, "cascade::depth-2", "size::medium")

	type posted struct {
		id   int64
		body string
	}
	var results []posted
	var d actiontest.Delivery
	post := func(i int, fields map[string]any) {
		t.Helper()
		name := []string{"lead-developer", "code-reviewer"}[i%2]
		fields["key_stats"] = map[string]any{"tests_added": 10 + i, "coverage_pct": 87.4}
		if i == 3 {
			// Footers are the agents' text: the digest must neutralise it.
			fields["verdict"] = "approve | forged | row |\n| 9 | x"
			fields["key_stats"] = "cc @" + victim + " `rm -rf /` <b>bold</b>"
		}
		var id int64
		id, d = f.Comment(t, n, agent, result(t, name, "implementation", 1, fields))
		results = append(results, posted{id, ""})
	}
	for i := range 4 {
		post(i, map[string]any{"status": "done", "verdict": fmt.Sprintf("approve-%d", i)})
	}
	r := f.Run(t, d)
	r.Expect(t, 0, "pass")
	r.ExpectRules(t)
	if got := f.GuardComments(t, n, actiontest.DigestMarker(n)); len(got) != 0 {
		t.Fatalf("a digest after 4 results:\n%s", got[0].Body)
	}
	before := len(notifications(t, f, victimTok))

	post(4, map[string]any{"status": "done", "verdict": "approve-4"})
	r = f.Run(t, d)
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
		want := urls[results[i].id]
		if m[1] != fmt.Sprint(i+1) || want == "" || m[3] != want {
			t.Errorf("row %d links %q, want the result comment %d at %q", i+1, m[3], results[i].id, want)
		}
		if i != 3 && !strings.Contains(m[2], fmt.Sprintf("| done | approve-%d | 1 | coverage\\_pct=87.4, tests\\_added=%d", i, 10+i)) {
			t.Errorf("row %d does not show the footer's status, verdict, files and key stats:\n%s", i+1, m[0])
		}
	}
	if strings.Contains(dg, "@"+victim) || strings.Contains(dg, "`") || strings.Contains(dg, "<b>") {
		t.Errorf("the hostile footer reached the digest raw:\n%s", dg)
	}
	// Gitea notifies from a queue: once a later comment's mention has
	// reached a witness, a mention in the digest would have reached the victim.
	witness, witnessTok := actiontest.Collaborator(t, f.S, f.Owner, f.Name, "witness", giteatest.PermRead)
	f.API(t, f.S.AdminToken, http.MethodPost, f.Path("/issues/%d/comments", n), map[string]string{"body": "cc @" + witness}, nil)
	f.Runs.Next(t, actiontest.From("issue_comment", "created", n, f.S.AdminLogin))
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

	// A re-run of the same event, then a sixth result: still one digest.
	r = f.Run(t, d)
	r.Expect(t, 0, "pass")
	r.ExpectRules(t)
	post(5, map[string]any{"status": "done", "verdict": "approve-5"})
	r = f.Run(t, d)
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
