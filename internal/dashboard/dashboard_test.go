package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/burn"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/issues"
	ledgerpkg "github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
	"github.com/gns-guard/gns-guard/internal/testkit/golden"
)

const rerun = "go test ./internal/dashboard -update"

func ptr[T any](v T) *T { return &v }

// sample is a sweep with a passing, a failing, a stale, an exhausted and
// an unreadable issue, and hostile titles and agent names.
func sample() *Result {
	at := time.Date(2026, 5, 16, 13, 0, 0, 0, time.UTC)
	r := &Result{
		Repo: "acme/agents", At: at, Open: 7, StaleAfter: 7 * 24 * time.Hour,
		Rows: []Row{
			{Number: 14, Title: "Rate limits", Phase: "implementation", Depth: ptr[int64](1), MaxDepth: ptr(2),
				Budget: &IssueBudget{Total: 40000, Consumed: 25000, Remaining: 15000, Lifetime: 41681, Earlier: 16681}, UsedPercent: ptr(62), BudgetWarning: "60%",
				Verdict: "pass", Rules: []string{}, Warnings: []string{}, LastAgent: "lead-developer", NextAgent: "code-reviewer",
				UpdatedAt: at.Add(-time.Hour), Progress: at.Add(-time.Hour), ProgressFrom: "ledger"},
			{Number: 12, Title: "@alice | ```\n#12 <b>fix</b> !3 see https://example.com/x", Phase: "review", Depth: ptr[int64](3), MaxDepth: ptr(2),
				Budget: &IssueBudget{Total: 10000, Consumed: 8500, Remaining: 1500, Lifetime: 8500}, UsedPercent: ptr(85), BudgetWarning: "80%",
				Verdict: "fail", Rules: []string{"depth-exceeded"}, Warnings: []string{}, LastAgent: "@bob`", NextAgent: "tester|x",
				UpdatedAt: at.Add(-2 * time.Hour), Progress: at.Add(-2 * time.Hour), ProgressFrom: "ledger"},
			{Number: 9, Title: "Old migration", Phase: "design", Depth: ptr[int64](0), MaxDepth: ptr(-1),
				Budget: &IssueBudget{Total: 5000, Consumed: 1000, Remaining: 4000, Lifetime: 1000}, UsedPercent: ptr(20),
				Verdict: "pass", Rules: []string{}, Warnings: []string{}, LastAgent: "architect", NextAgent: "orchestrator",
				UpdatedAt: at.Add(-24 * time.Hour), Progress: at.Add(-10 * 24 * time.Hour), ProgressFrom: "ledger", Stale: true},
			{Number: 7, Title: "Out of tokens", Phase: "testing", Depth: ptr[int64](1), MaxDepth: ptr(2),
				Budget: &IssueBudget{Total: 8000, Consumed: 8000, Remaining: 0, Lifetime: 8000}, UsedPercent: ptr(100), BudgetWarning: "exhausted", Waiting: true,
				Verdict: "fail", Rules: []string{"budget-exhausted"}, Warnings: []string{}, LastAgent: "tester", NextAgent: "",
				UpdatedAt: at.Add(-3 * time.Hour), Progress: at.Add(-3 * time.Hour), ProgressFrom: "ledger"},
			{Number: 3, Title: "Broken", Verdict: "fail", Rules: []string{"checkpoint-invalid"}, Warnings: []string{},
				UpdatedAt: at.Add(-5 * time.Hour), Progress: at.Add(-5 * time.Hour), ProgressFrom: "activity"},
		},
	}
	r.Rows[0].burn = burn.Series{Issue: 14, Title: "Rate limits", Total: 40000, Points: []burn.Point{
		{Step: 1, At: at.Add(-5 * time.Hour), Consumed: 0, Remaining: 40000},
		{Step: 2, At: at.Add(-3 * time.Hour), Agent: "lead-developer", Consumed: 12000, Remaining: 28000},
		{Step: 3, At: at.Add(-1 * time.Hour), Agent: "code-reviewer", Consumed: 25000, Remaining: 15000}}}
	r.Rows[1].burn = burn.Series{Issue: 12, Title: r.Rows[1].Title, Total: 10000, Points: []burn.Point{
		{Step: 1, At: at.Add(-4 * time.Hour), Consumed: 2000, Remaining: 8000},
		{Step: 2, At: at.Add(-2 * time.Hour), Agent: "@bob`", Consumed: 8500, Remaining: 1500}}}
	return r
}

func TestRenderGolden(t *testing.T) {
	r := sample()
	js, err := JSON(r)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "status.json"), string(js), rerun)
	golden.Check(t, filepath.Join("testdata", "status.txt"), Text(r), rerun)
	golden.Check(t, filepath.Join("testdata", "status.md"), Markdown(r), rerun)
	golden.Check(t, filepath.Join("testdata", "dashboard.md"), Body(r, "v1.2.3"), rerun)
}

// TestMarkdownKeepsUntrustedTextInert: no title or agent name breaks a
// table row, opens a fence, mentions someone or references an issue.
func TestMarkdownKeepsUntrustedTextInert(t *testing.T) {
	md := Markdown(sample())
	lines := strings.Split(strings.TrimSpace(md), "\n")
	for _, l := range lines[2:] {
		if !strings.HasPrefix(l, "| ") {
			continue
		}
		if n := strings.Count(strings.ReplaceAll(l, `\|`, ""), "|"); n != 13 {
			t.Errorf("%d cell separators, want 13: %s", n, l)
		}
	}
	for _, bad := range []string{"@alice", "@bob", "```", "<b>", " #12 ", "!3", "https://"} {
		if strings.Contains(md, bad) {
			t.Errorf("the table holds %q:\n%s", bad, md)
		}
	}
	body := Body(sample(), "@v1")
	if n := strings.Count(body, "```"); n != 2 || !strings.Contains(body, "```mermaid\n") {
		t.Errorf("unbalanced fences:\n%s", body)
	}
	if !strings.HasPrefix(body, Marker+"\n") || strings.Contains(body, "@v1") {
		t.Errorf("body:\n%s", body)
	}
}

// giteaReference is how Gitea 1.26 finds an issue or pull request
// reference in text (modules/references): the dashboard must hold none
// outside code, or every publish would record a reference on the issues
// it names.
var giteaReference = regexp.MustCompile(`(?:\s|^|\(|\[|\'|\")([#!][0-9]+)(?:\s|$|\)|\]|\'|\"|[:;,.?!]\s|[:;,.?!]$)`)

func TestBodyReferencesNoIssue(t *testing.T) {
	for _, r := range []*Result{sample(), gatedSample()} {
		body := Body(r, "v1")
		// What Gitea's Markdown stripper keeps: no fenced blocks, no code
		// spans, escapes resolved.
		text := regexp.MustCompile("(?s)```.*?```").ReplaceAllString(body, "")
		text = regexp.MustCompile("`[^`]*`").ReplaceAllString(text, "")
		text = strings.ReplaceAll(text, `\`, "")
		if m := giteaReference.FindAllString(text, -1); len(m) > 0 {
			t.Errorf("the body references %q:\n%s", m, body)
		}
	}
}

func TestJSONShape(t *testing.T) {
	js, _ := JSON(sample())
	var rows []map[string]any
	if err := json.Unmarshal(js, &rows); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"number", "title", "phase", "depth", "max_depth", "budget", "verdict", "rules", "last_agent", "next_agent", "updated_at", "stale"} {
		if _, ok := rows[0][k]; !ok {
			t.Errorf("key %s missing: %v", k, rows[0])
		}
	}
	if rows[4]["depth"] != nil || rows[4]["budget"] != nil || rows[4]["verdict"] != "fail" {
		t.Errorf("an unreadable checkpoint: %v", rows[4])
	}
}

// sweepTime is when the tests' sweeps decide.
var sweepTime = time.Date(2026, 5, 16, 13, 0, 0, 0, time.UTC)

// newFake is acme/agents on the fake Gitea, on the sweeps' clock, and
// the client of the guard's user, guard-bot.
func newFake() (*fakeforge.Server, *fakeforge.Client) {
	srv := fakeforge.New("acme/agents")
	srv.Now = func() time.Time { return sweepTime }
	return srv, srv.As("guard-bot")
}

// add opens an issue "issue N" with body and labels as author, in state.
func add(srv *fakeforge.Server, body, author, state string, labels ...string) int64 {
	is := issues.Issue{Body: body, State: state}
	for _, l := range labels {
		is.Labels = append(is.Labels, issues.Label{Name: l})
	}
	n := srv.AddIssue(is, author)
	srv.Change(n, func(is *issues.Issue) { is.Title = fmt.Sprintf("issue %d", n) })
	return n
}

// setBody sets issue n's body, as it was opened.
func setBody(srv *fakeforge.Server, n int64, body string) {
	srv.Change(n, func(is *issues.Issue) { is.Body = body })
}

// written counts the writes of method the sweep's client made.
func written(srv *fakeforge.Server, method string) int {
	n := 0
	for _, w := range srv.Writes() {
		if w.Method == method {
			n++
		}
	}
	return n
}

func checkpointBody(n int64, total, consumed int) string {
	return fmt.Sprintf("Task.\n\n```yaml\ncheckpoint:\n  version: 2\n  issue: %d\n  phase: implementation\n  depth: 1\n  last_agent: orchestrator\n  last_invocation: inv-0\n  budget:\n    total: %d\n    consumed: %d\n    remaining: %d\n  state:\n    labels: [cascade::depth-2]\n    assignee: orchestrator\n  next_agent: lead-developer\n  next_estimated_tokens: 1000\n  created_at: \"2026-05-16T12:50:00Z\"\n```\n",
		n, total, consumed, total-consumed)
}

func sweepOf(f *fakeforge.Client, skip string) *Sweep {
	cfg := config.Default()
	return &Sweep{
		Reader: &live.Reader{Forge: f, Where: live.Where{Verb: "status", Server: "http://gitea", Repo: "acme/agents"}, Guard: "guard-bot"},
		Lister: f, Config: cfg, Repo: "acme/agents",
		Now:  func() time.Time { return sweepTime },
		Skip: func(is issues.Issue, author string) bool { return IsDashboard(is, author, skip) },
	}
}

// TestSweepListsGovernedIssuesOnly: an ungoverned issue is not listed, a
// broken checkpoint is listed with its finding, and the requests are one
// page of the list plus one an issue.
func TestSweepListsGovernedIssuesOnly(t *testing.T) {
	srv, f := newFake()
	ok := add(srv, "", "alice", "open", "cascade::depth-2")
	setBody(srv, ok, checkpointBody(ok, 10000, 7000))
	broken := add(srv, "```yaml\ncheckpoint:\n  version: 2\n  phase: [\n```\n", "alice", "open", "cascade::depth-2")
	add(srv, "Just a question, no checkpoint.", "alice", "open")
	add(srv, checkpointBody(4, 100, 0), "alice", "closed", "cascade::depth-2")
	res, err := sweepOf(f, "").Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || res.Open != 3 || res.Rows[0].Number != broken || res.Rows[1].Number != ok {
		t.Fatalf("rows %+v, open %d", res.Rows, res.Open)
	}
	b := res.Rows[0]
	if b.Verdict != "fail" || len(b.Findings) == 0 || b.Depth != nil || b.Budget != nil {
		t.Errorf("broken checkpoint row %+v", b)
	}
	g := res.Rows[1]
	if g.Phase != "implementation" || *g.Depth != 1 || *g.MaxDepth != 2 || g.Budget.Consumed != 7000 || *g.UsedPercent != 70 || g.BudgetWarning != "60%" || g.NextAgent != "lead-developer" {
		t.Errorf("row %+v", g)
	}
	if g.ProgressFrom != "activity" {
		t.Errorf("no ledger: progress from %q", g.ProgressFrom)
	}
	if f.Requests() != 1+2 {
		t.Errorf("%d requests, want 1 list page + 2 governed issues", f.Requests())
	}
}

func TestSweepPagesAndStale(t *testing.T) {
	srv, f := newFake()
	for i := 0; i < 120; i++ {
		n := add(srv, "", "alice", "open", "cascade::depth-2")
		srv.Change(n, func(is *issues.Issue) {
			is.Body = checkpointBody(n, 10000, 100)
			is.UpdatedAt = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
			if i%2 == 0 {
				is.UpdatedAt = time.Date(2026, 5, 16, 0, 0, 0, 0, time.UTC)
			}
		})
	}
	res, err := sweepOf(f, "").Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	stale := 0
	for _, r := range res.Rows {
		if r.Stale {
			stale++
		}
	}
	if len(res.Rows) != 120 || stale != 60 {
		t.Errorf("%d rows, %d stale; want 120 and 60", len(res.Rows), stale)
	}
	if f.Requests() != 3+120 {
		t.Errorf("%d requests, want 3 pages + 120 issues", f.Requests())
	}
}

// TestKeepFindsByMarkerAndAuthor: the guard's own issue with the marker is
// edited in place; an impostor's issue with the marker is left alone; a
// second keep with the same body writes nothing.
func TestKeepFindsByMarkerAndAuthor(t *testing.T) {
	srv, f := newFake()
	impostor := add(srv, Marker+"\nfake dashboard", "mallory", "open")
	res, err := sweepOf(f, f.User()).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	k, err := Keep(context.Background(), f, res.Listed, f.User(), "one "+Marker)
	if err != nil || k.Action != "created" || k.Number == impostor || written(srv, "CreateIssue") != 1 {
		t.Fatalf("first keep: %+v %v, writes %v", k, err, srv.Writes())
	}
	res, _ = sweepOf(f, f.User()).Run(context.Background())
	k2, err := Keep(context.Background(), f, res.Listed, f.User(), "two "+Marker)
	if err != nil || k2.Action != "edited" || k2.Number != k.Number || written(srv, "CreateIssue") != 1 || srv.Issue(impostor).Body != Marker+"\nfake dashboard" {
		t.Fatalf("second keep: %+v %v, writes %v", k2, err, srv.Writes())
	}
	res, _ = sweepOf(f, f.User()).Run(context.Background())
	before := written(srv, "EditIssue")
	k3, err := Keep(context.Background(), f, res.Listed, f.User(), "two "+Marker)
	if err != nil || k3.Action != "unchanged" || written(srv, "EditIssue") != before {
		t.Fatalf("third keep: %+v %v", k3, err)
	}
}

// TestKeepReopensAClosedDashboard: a dashboard a person closed is found
// among the closed issues, reopened and edited, not opened again.
func TestKeepReopensAClosedDashboard(t *testing.T) {
	srv, f := newFake()
	n := add(srv, Marker+"\nold", "guard-bot", "closed")
	k, err := Keep(context.Background(), f, nil, f.User(), "new "+Marker)
	if err != nil || k.Action != "reopened" || k.Number != n || srv.Issue(n).State != "open" || written(srv, "CreateIssue") != 0 {
		t.Fatalf("%+v %v, issue %+v", k, err, srv.Issue(n))
	}
}

// TestSweepSkipsTheDashboard: the dashboard issue is never judged as an
// issue, whatever its body holds.
func TestSweepSkipsTheDashboard(t *testing.T) {
	srv, f := newFake()
	n := add(srv, Marker+"\n"+checkpointBody(1, 100, 0), "guard-bot", "open", "cascade::depth-2")
	imp := add(srv, Marker+"\n"+checkpointBody(2, 100, 0), "mallory", "open", "cascade::depth-2")
	res, err := sweepOf(f, "guard-bot").Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0].Number != imp || res.Open != 2 {
		t.Errorf("rows %+v (dashboard #%d)", res.Rows, n)
	}
}

// The summary line counts in good English: one issue is not "issues".
func TestSummaryPlural(t *testing.T) {
	r := sample()
	r.Rows = r.Rows[:1]
	if got := Text(r); !strings.HasPrefix(got, "acme/agents: 1 open governed issue (of 7 open): 1 pass") {
		t.Errorf("one issue: %q", strings.SplitN(got, "\n", 2)[0])
	}
	r.Rows = nil
	if got := Text(r); !strings.HasPrefix(got, "acme/agents: 0 open governed issues (of 7 open)") {
		t.Errorf("none: %q", strings.SplitN(got, "\n", 2)[0])
	}
}

// The repository budget's burn: from the grant list when the run holds it
// (the action's dashboard), else summed from the open issues' records,
// saying that issues closed in the window are not counted.
func TestSweepShowsTheRepositoryBudget(t *testing.T) {
	srv, f := newFake()
	now := sweepTime
	for i, grants := range [][]ledgerpkg.Grant{
		{{Issue: 1, Tokens: 20000, Time: now.Add(-time.Hour).Unix()}},
		{{Issue: 2, Tokens: 900000, Time: now.Add(-30 * 24 * time.Hour).Unix()}, {Issue: 2, Tokens: 5000, Time: now.Add(-time.Minute).Unix()}},
	} {
		n := add(srv, "", "alice", "open", "cascade::depth-2")
		setBody(srv, n, checkpointBody(n, 10000, 100))
		l := ledgerpkg.Record{Issue: n, Baseline: true, Version: 2, CheckpointIssue: n, Phase: "implementation", Total: 10000, Consumed: 100, Remaining: 9900, Writer: "guard-bot", Grants: grants}
		srv.AddComment(n, issues.Comment{ID: int64(10 + i), Author: "guard-bot", Body: issues.StatusMarker(n) + "\n" + ledgerpkg.Encode(l, nil)})
	}
	sw := sweepOf(f, "")
	sw.Config.RepositoryBudget = 30000
	res, err := sw.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rb := res.Budget; rb == nil || rb.Granted != 25000 || !rb.Summed {
		t.Fatalf("summed from the records: %+v", rb)
	}
	if text := Text(res); !strings.Contains(text, "Repository budget: 25,000 of 30,000 tokens granted in the last 7d (83%), summed from the open issues' records (issues closed in the window are not counted") {
		t.Errorf("text:\n%s", text)
	}
	list := ledgerpkg.Grants{Grants: []ledgerpkg.Grant{{Issue: 7, Tokens: 40000, Time: now.Add(-time.Hour).Unix()}}}
	sw.Grants = ledgerpkg.GrantState{Known: true, Text: ledgerpkg.EncodeGrants(list, nil)}
	if res, err = sw.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if md := Markdown(res); res.Budget.Granted != 40000 || !strings.Contains(md, "Repository budget: 40,000 of 30,000 tokens granted in the last 7d (133%): over the cap") {
		t.Errorf("from the grant list: %+v\n%s", res.Budget, md)
	}
}
