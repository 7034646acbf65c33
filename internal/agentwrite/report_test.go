package agentwrite_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/agentwrite"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/handoff"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/issuetx"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/testkit"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

const (
	repo  = "acme/agents"
	agent = "lead-developer"
)

// start is the fake server's clock: the issue is opened at it, so the
// guard's grace for an unjudged body has not run out.
var start = time.Date(2026, 5, 16, 13, 30, 0, 0, time.UTC)

// newIssue serves the healthy example as issue 42, its labels attached,
// and a connection for the agent.
func newIssue(t *testing.T) (*fakeforge.Server, agentwrite.Conn) {
	t.Helper()
	root, err := testkit.Root()
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(root + "/examples/issues/healthy.md")
	if err != nil {
		t.Fatal(err)
	}
	srv := fakeforge.New(repo)
	srv.Now = func() time.Time { return start }
	srv.Grant(agent, "write")
	is := issues.Issue{Number: 42, Title: "rate limits", Body: string(body), CreatedAt: start, UpdatedAt: start}
	for _, l := range []string{"cascade::depth-2", "size::medium", "phase::implementation"} {
		is.Labels = append(is.Labels, issues.Label{Name: l})
	}
	srv.AddIssue(is, agent)
	accept(t, srv)
	client := srv.As(agent)
	counter, err := tokens.New(tokens.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	return srv, agentwrite.Conn{
		Reader: &live.Reader{Forge: client, Admin: client, Where: live.Where{Verb: "report", Server: fakeforge.URL, Repo: repo}},
		Client: client, Config: config.Default(), Counter: counter, Self: agent,
		Now: func() time.Time { return start },
	}
}

// accept posts the guard's status comment with its ledger, as its run on
// the opened issue leaves it: the state as opened, accepted.
func accept(t *testing.T, srv *fakeforge.Server) {
	t.Helper()
	is := srv.Issue(42)
	l := ledger.Record{Issue: 42, Baseline: true, Version: 2, CheckpointIssue: 42, Phase: "implementation",
		Total: 20000, Consumed: 6200, Remaining: 13800, ContentVersion: is.ContentVersion, DepthLimit: "2", Size: "medium",
		Labels: is.Labels, Pending: []string{}, Written: start.Unix()}
	body := issues.StatusMarker(42) + "\n## ✅ gns-guard: all clear\n" + ledger.Encode(l, nil) + "\n"
	if _, err := srv.As(issues.ActionsUser).CreateComment(context.Background(), 42, body); err != nil {
		t.Fatal(err)
	}
}

// request is the lead developer's report: 1,000 tokens, the reviewer next.
func request() agentwrite.ReportRequest {
	return agentwrite.ReportRequest{Issue: 42, Report: handoff.Report{
		Agent: agent, Invocation: "inv-2", Consumed: 1000, Action: "wired the limiter",
		Status: "ok", NextAgent: "code-reviewer", NextEstimate: 2000,
	}}
}

func TestAReportIsWrittenOnce(t *testing.T) {
	srv, conn := newIssue(t)
	ctx := context.Background()
	res, err := agentwrite.Report(ctx, conn, request())
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "written" || !res.CommentPosted || !res.Patched || res.After.Consumed != 7200 {
		t.Fatalf("first report: outcome %q, posted %v, patched %v, consumed %d; want written, a comment, the body patched, 7200",
			res.Outcome, res.CommentPosted, res.Patched, res.After.Consumed)
	}
	if !strings.Contains(srv.Issue(42).Body, "consumed: 7200") {
		t.Fatalf("the body does not hold the new consumed:\n%s", srv.Issue(42).Body)
	}
	writes := len(srv.Writes())
	again, err := agentwrite.Report(ctx, conn, request())
	if err != nil {
		t.Fatal(err)
	}
	if again.Outcome != "already-reported" || len(srv.Writes()) != writes {
		t.Fatalf("the re-run: outcome %q and %d new writes; want already-reported and none", again.Outcome, len(srv.Writes())-writes)
	}
}

func TestAConcurrentEditIsKept(t *testing.T) {
	srv, conn := newIssue(t)
	// A person edits the prose between the report's read and its write:
	// the write is refused (409), read again, and both edits are kept.
	srv.Inject(fakeforge.Fault{Method: "EditBody", Times: 1, Before: func() {
		is := srv.Issue(42)
		if _, err := srv.As("acme").EditBody(context.Background(), 42, strings.Replace(is.Body, "Acceptance:", "Acceptance (agreed):", 1), is.ContentVersion); err != nil {
			t.Error(err)
		}
	}})
	res, err := agentwrite.Report(context.Background(), conn, request())
	if err != nil {
		t.Fatal(err)
	}
	body := srv.Issue(42).Body
	if res.Attempts != 2 || !strings.Contains(body, "Acceptance (agreed):") || !strings.Contains(body, "consumed: 7200") {
		t.Fatalf("after a concurrent edit: %d attempts; body:\n%s\nwant 2 attempts, the person's edit and the report's", res.Attempts, body)
	}
	if comments := countComments(srv, agent); comments != 1 {
		t.Fatalf("%d result comments; want 1: the second attempt finds the first's", comments)
	}
}

func TestAConflictOnEveryWriteIsBounded(t *testing.T) {
	srv, conn := newIssue(t)
	srv.Inject(fakeforge.Fault{Method: "EditBody", Status: 409})
	_, err := agentwrite.Report(context.Background(), conn, request())
	if !errors.Is(err, issues.ErrConflict) {
		t.Fatalf("a conflict on every write: got %v; want the conflict, after %d attempts", err, issuetx.Attempts)
	}
	if n := srv.Calls("EditBody"); n != issuetx.Attempts {
		t.Fatalf("%d writes of the body; want %d, the transaction's bound", n, issuetx.Attempts)
	}
	if comments := countComments(srv, agent); comments != 1 {
		t.Fatalf("%d result comments; want 1 however often the body is tried", comments)
	}
}

// A run that dies between its comment and its body write is finished
// by the next run of the same report: one comment, the body patched.
func TestACrashBetweenTheCommentAndTheBody(t *testing.T) {
	srv, conn := newIssue(t)
	srv.Inject(fakeforge.Fault{Method: "EditBody", Times: 1, Unreachable: true})
	if _, err := agentwrite.Report(context.Background(), conn, request()); err == nil {
		t.Fatal("the body write failed, yet the report says it was written")
	}
	if strings.Contains(srv.Issue(42).Body, "consumed: 7200") || countComments(srv, agent) != 1 {
		t.Fatalf("after the crash: want the comment posted and the body as it was")
	}
	res, err := agentwrite.Report(context.Background(), conn, request())
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "written" || res.CommentPosted || !strings.Contains(srv.Issue(42).Body, "consumed: 7200") {
		t.Fatalf("the re-run: outcome %q, posted a comment %v; want written, the earlier comment kept, the body patched",
			res.Outcome, res.CommentPosted)
	}
	if n := countComments(srv, agent); n != 1 {
		t.Fatalf("%d result comments after the re-run; want 1", n)
	}
}

func TestARefusedReportWritesNothing(t *testing.T) {
	srv, conn := newIssue(t)
	req := request()
	req.Report.NextEstimate = 12000 // more than the half of what remains
	before := len(srv.Writes())
	res, err := agentwrite.Report(context.Background(), conn, req)
	if !errors.Is(err, agentwrite.ErrRefused) || res == nil || res.Outcome != "refused" || len(res.Findings) == 0 {
		t.Fatalf("an estimate over the budget: %v, %+v; want refused with findings", err, res)
	}
	if w := srv.Writes()[before:]; len(w) != 0 {
		t.Fatalf("a refused report wrote %d times: %+v", len(w), w)
	}
}

// countComments counts the comments login wrote on issue 42.
func countComments(srv *fakeforge.Server, login string) int {
	n := 0
	for _, w := range srv.Writes() {
		if w.Method == "CreateComment" && w.User == login && w.Issue == 42 {
			n++
		}
	}
	return n
}
