package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/cli"
	"github.com/gns-guard/gns-guard/internal/dashboard"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// statusRow is the part of `status --format json` the tests read.
type statusRow struct {
	Number   int64  `json:"number"`
	Title    string `json:"title"`
	Phase    string `json:"phase"`
	Depth    *int64 `json:"depth"`
	MaxDepth *int   `json:"max_depth"`
	Budget   *struct {
		Total, Consumed, Remaining int64
	} `json:"budget"`
	Verdict   string   `json:"verdict"`
	Rules     []string `json:"rules"`
	LastAgent string   `json:"last_agent"`
	NextAgent string   `json:"next_agent"`
	UpdatedAt string   `json:"updated_at"`
	From      string   `json:"last_progress_from"`
	Stale     bool     `json:"stale"`
}

// status runs `gns-guard status` on r through server (the real one, or a
// counting proxy in front of it) with token.
func status(t *testing.T, r *actiontest.Repo, server, token string, args ...string) (string, string, int) {
	t.Helper()
	base := []string{"status", "--repo", r.Owner + "/" + r.Name, "--server", server, "--token", token, "--guard-user", r.Bot}
	return gns(t, nil, append(base, args...)...)
}

func decodeStatus(t *testing.T, stdout string) map[int64]statusRow {
	t.Helper()
	var rows []statusRow
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	out := map[int64]statusRow{}
	for _, r := range rows {
		out[r.Number] = r
	}
	return out
}

// openGoverned opens a governed issue with the given total and labels and
// runs the guard on its opened event (its ledger is then written).
func openGoverned(t *testing.T, r *actiontest.Repo, title string, total int, labels ...string) int64 {
	t.Helper()
	n, d := r.Open(t, title, func(n int64) string { return issueWithBudget(n, total, strings.Join(labels, ", ")) }, labels...)
	r.Step().RunInProcess(t, d, actiontest.InProcess{})
	return n
}

// TestStatusOnGitea: three governed issues — one stale (its ledger older
// than a short stale-after), one failing (depth over its cascade limit) —
// and one ungoverned; `status --format json` lists the three with the
// guard's numbers, at three requests plus one an issue.
func TestStatusOnGitea(t *testing.T) {
	r := actiontest.NewRepo(t)
	old := openGoverned(t, r, "Old work", 20000, "cascade::depth-2", "size::medium")
	// Only an order: the fresh issue's ledger is written at least four
	// seconds after the old one's. The verdicts below read the server's
	// clock through the proxy, set from the ledgers' own times, so a slow
	// machine cannot change them.
	time.Sleep(4 * time.Second)
	fresh := openGoverned(t, r, "Fresh work", 30000, "cascade::depth-2", "size::medium")
	failing := openGoverned(t, r, "Too deep", 10000, "cascade::depth-0", "size::medium")
	plain := actiontest.CreateIssue(t, r.S, r.Owner, r.Name, "A question", func(int64) string { return "No checkpoint here." })

	first, stderr, _ := status(t, r, r.S.URL, r.S.AdminToken, "--format", "json", "--stale-after", "24h")
	progress := func(n int64) time.Time {
		var rows []struct {
			Number   int64     `json:"number"`
			Progress time.Time `json:"last_progress"`
		}
		if err := json.Unmarshal([]byte(first), &rows); err != nil {
			t.Fatalf("%v\n%s\n%s", err, first, stderr)
		}
		for _, row := range rows {
			if row.Number == n {
				return row.Progress
			}
		}
		t.Fatalf("#%d is not listed:\n%s", n, first)
		return time.Time{}
	}
	gap := progress(fresh).Sub(progress(old))
	if gap < 4*time.Second {
		t.Fatalf("test setup: the ledgers were written %s apart, want 4s or more", gap)
	}
	// Half the gap, whole seconds: the old issue's progress is older than
	// that when the server's clock reads a second after the fresh one's,
	// the fresh issue's is not.
	staleAfter := (gap / 2).Truncate(time.Second)
	now := progress(fresh).Add(time.Second)

	p := newCountingProxy(t, r.S.URL)
	p.clock = func() time.Time { return now }
	stdout, stderr, code := status(t, r, p.srv.URL, r.S.AdminToken, "--format", "json", "--stale-after", staleAfter.String())
	if code != 1 {
		t.Fatalf("exit %d, want 1 (an issue fails)\n%s\n%s", code, stdout, stderr)
	}
	rows := decodeStatus(t, stdout)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3 (not the ungoverned #%d):\n%s", len(rows), plain, stdout)
	}
	for _, n := range []int64{old, fresh, failing} {
		row := rows[n]
		if row.Phase != "implementation" || row.Depth == nil || *row.Depth != 1 || row.LastAgent != "orchestrator" || row.NextAgent != "lead-developer" || row.From != "ledger" {
			t.Errorf("#%d: %+v", n, row)
		}
	}
	if o := rows[old]; !o.Stale || o.Verdict != "pass" || *o.MaxDepth != 2 || o.Budget.Total != 20000 || o.Budget.Remaining != 20000 || o.Title != "Old work" {
		t.Errorf("old: %+v", o)
	}
	if f := rows[fresh]; f.Stale || f.Verdict != "pass" || len(f.Rules) != 0 || f.Budget.Total != 30000 {
		t.Errorf("fresh: %+v", f)
	}
	if f := rows[failing]; f.Stale || f.Verdict != "fail" || len(f.Rules) != 1 || f.Rules[0] != "depth-exceeded" || *f.MaxDepth != 0 {
		t.Errorf("failing: %+v", f)
	}
	// The configuration file, the workflows (is the guard's disabled?),
	// one page of the list, one read an issue.
	if reqs := p.requests(); len(reqs) != 3+3 {
		t.Errorf("%d requests, want 3 + 1 per governed issue (3):\n%s", len(reqs), strings.Join(reqs, "\n"))
	}
	// The text and Markdown forms list the same issues.
	text, _, _ := status(t, r, p.srv.URL, r.S.AdminToken, "--stale-after", staleAfter.String())
	md, _, _ := status(t, r, p.srv.URL, r.S.AdminToken, "--format", "markdown", "--stale-after", staleAfter.String())
	for _, n := range []int64{old, fresh, failing} {
		if !strings.Contains(text, fmt.Sprintf("#%d ", n)) || !strings.Contains(md, fmt.Sprintf("| `#%d` |", n)) {
			t.Errorf("#%d missing:\n%s\n%s", n, text, md)
		}
	}
	if strings.Contains(text, fmt.Sprintf("#%d ", plain)) {
		t.Errorf("the ungoverned issue is listed:\n%s", text)
	}
}

// TestStatusRequestsGrowByOneAnIssue: 3 and 30 governed issues cost the
// same constant plus one request an issue.
func TestStatusRequestsGrowByOneAnIssue(t *testing.T) {
	t.Parallel()
	r := actiontest.NewRepo(t)
	count := func() int {
		p := newCountingProxy(t, r.S.URL)
		stdout, stderr, code := status(t, r, p.srv.URL, r.S.AdminToken, "--format", "json")
		if code > 1 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		return len(p.requests())
	}
	open := func(k int) {
		for range k {
			actiontest.CreateIssue(t, r.S, r.Owner, r.Name, "task", func(n int64) string { return issueWithBudget(n, 10000, "") }, "cascade::depth-2")
		}
	}
	open(3)
	three := count()
	open(27)
	thirty := count()
	t.Logf("requests: %d for 3 governed issues, %d for 30", three, thirty)
	if three != 3+3 || thirty != 3+30 {
		t.Errorf("requests: %d for 3 issues, %d for 30; want 3+3 and 3+30", three, thirty)
	}
}

// TestStatusPublishKeepsOneDashboard: --publish twice gives one dashboard
// issue by the token's user, edited in place; an impostor's issue with the
// marker is left alone.
func TestStatusPublishKeepsOneDashboard(t *testing.T) {
	t.Parallel()
	r := actiontest.NewRepo(t)
	n := openGoverned(t, r, "Rate limits", 20000, "cascade::depth-2", "size::medium")
	impostor := actiontest.CreateIssue(t, r.S, r.Owner, r.Name, "gns-guard dashboard", func(int64) string { return dashboard.Marker + "\nnot the guard's" })
	_, stderr, code := status(t, r, r.S.URL, r.Token, "--publish")
	if code != 0 || !strings.Contains(stderr, "created") {
		t.Fatalf("first publish: exit %d\n%s", code, stderr)
	}
	first := dashboards(t, r)
	if len(first) != 1 || first[0].Number == impostor || !strings.Contains(first[0].Body, fmt.Sprintf("`#%d`", n)) || !strings.Contains(first[0].Body, "```mermaid") && !strings.Contains(first[0].Body, "Budget burn") {
		t.Fatalf("dashboards after the first publish: %+v", first)
	}
	// Something changes (one more open issue), and the second run edits.
	actiontest.CreateIssue(t, r.S, r.Owner, r.Name, "Another question", func(int64) string { return "No checkpoint." })
	_, stderr, code = status(t, r, r.S.URL, r.Token, "--publish")
	if code != 0 || !strings.Contains(stderr, fmt.Sprintf("#%d edited", first[0].Number)) {
		t.Fatalf("second publish: exit %d\n%s", code, stderr)
	}
	second := dashboards(t, r)
	if len(second) != 1 || second[0].Number != first[0].Number || second[0].Body == first[0].Body || second[0].State != "open" {
		t.Fatalf("dashboards after the second publish: %+v", second)
	}
	var imp struct{ Body string }
	r.API(t, r.S.AdminToken, http.MethodGet, r.Path("/issues/%d", impostor), nil, &imp)
	if imp.Body != dashboard.Marker+"\nnot the guard's" {
		t.Errorf("the impostor's issue was changed: %q", imp.Body)
	}
}

type listedIssue struct {
	Number int64  `json:"number"`
	Body   string `json:"body"`
	State  string `json:"state"`
	User   struct {
		Login string `json:"login"`
	} `json:"user"`
}

// dashboards are the issues, open or closed, with the marker by the
// guard's user.
func dashboards(t *testing.T, r *actiontest.Repo) []listedIssue {
	t.Helper()
	var all []listedIssue
	r.API(t, r.S.AdminToken, http.MethodGet, r.Path("/issues?state=all&type=issues&limit=50"), nil, &all)
	var out []listedIssue
	for _, is := range all {
		if strings.Contains(is.Body, dashboard.Marker) && is.User.Login == r.Bot {
			out = append(out, is)
		}
	}
	return out
}

// BenchmarkStatus200 measures `status` on 200 governed issues on the real
// server: the requests and the time of one sweep.
func BenchmarkStatus200(b *testing.B) {
	r := actiontest.NewRepo(b)
	for range 200 {
		actiontest.CreateIssue(b, r.S, r.Owner, r.Name, "task", func(n int64) string { return issueWithBudget(n, 10000, "") }, "cascade::depth-2")
	}
	b.ResetTimer()
	var reqs int
	for b.Loop() {
		p := newCountingProxy(b, r.S.URL)
		var out, errb strings.Builder
		code := gnsB(b, &out, &errb, "status", "--repo", r.Owner+"/"+r.Name, "--server", p.srv.URL, "--token", r.S.AdminToken, "--format", "json")
		if code > 1 {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
		reqs = len(p.requests())
	}
	b.ReportMetric(float64(reqs), "requests/op")
}

// gnsB runs a verb in this process for a benchmark.
func gnsB(b *testing.B, out, errb *strings.Builder, args ...string) int {
	b.Helper()
	env := cli.System()
	env.Stdout, env.Stderr = out, errb
	env.Getenv = func(string) string { return "" }
	env.AppendFile = func(string, []byte) error { return nil }
	return cli.Main(context.Background(), args, env)
}

// TestStatusAfterAPrune: an issue spends 16,681 of its 20,000 tokens and
// the guard's budget prune starts a new phase of 1,659. `status`, the
// dashboard's table and the status comment show the new phase's figures
// with the issue's lifetime spend next to them, never 0 spent.
func TestStatusAfterAPrune(t *testing.T) {
	t.Parallel()
	r := actiontest.NewRepo(t)
	n := openGoverned(t, r, "Rate limits", 20000, "cascade::depth-2", "size::medium")
	agent := r.User(t, "agent", giteatest.PermWrite)
	body := r.Issue(t, n).Body
	spent := strings.NewReplacer("consumed: 0\n", "consumed: 16681\n", "remaining: 20000\n", "remaining: 3319\n", "next_estimated_tokens: 2000", "next_estimated_tokens: 500").Replace(body)
	res := r.Step().RunInProcess(t, r.EditBody(t, n, agent, spent), actiontest.InProcess{})
	if res.Code != 0 || res.Outputs["pruned"] != "true" {
		t.Fatalf("the guard did not prune into a new phase:\n%s", res)
	}
	stdout, stderr, code := status(t, r, r.S.URL, r.S.AdminToken, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	var rows []struct {
		Number int64 `json:"number"`
		Budget struct {
			Total     int64 `json:"total"`
			Consumed  int64 `json:"consumed"`
			Lifetime  int64 `json:"lifetime_consumed"`
			Earlier   int64 `json:"earlier_phases_consumed"`
			Remaining int64 `json:"remaining"`
		} `json:"budget"`
	}
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if b := rows[0].Budget; b.Total != 1659 || b.Consumed != 0 || b.Lifetime != 16681 || b.Earlier != 16681 {
		t.Errorf("status after the prune: %+v; want the new phase 0 of 1,659 and 16,681 spent in all", b)
	}
	text, _, _ := status(t, r, r.S.URL, r.S.AdminToken)
	md, _, _ := status(t, r, r.S.URL, r.S.AdminToken, "--format", "markdown")
	for what, out := range map[string]string{"text": text, "markdown": md} {
		if !strings.Contains(out, "0 of 1,659 (0%)") || !strings.Contains(out, "16,681 (16,681 before this phase)") {
			t.Errorf("status (%s) does not show the lifetime spend next to the phase's:\n%s", what, out)
		}
	}
	// A report in the new phase adds to it; the status comment says both.
	more := strings.Replace(strings.Replace(r.Issue(t, n).Body, "consumed: 0", "consumed: 400", 1), "remaining: 1659", "remaining: 1259", 1)
	if res := r.Step().RunInProcess(t, r.EditBody(t, n, agent, more), actiontest.InProcess{}); res.Code != 0 {
		t.Fatalf("a report in the new phase failed:\n%s", res)
	}
	want := "400 of 1,659 tokens consumed in this phase (24%), 1,259 left · **Lifetime** 17,081 tokens consumed on the issue, 16,681 of them in earlier phases"
	if sc := r.Status(t, n).Body; !strings.Contains(sc, want) {
		t.Errorf("the status comment lacks %q:\n%s", want, sc)
	}
}
