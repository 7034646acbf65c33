package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/cli"
	"github.com/gns-guard/gns-guard/internal/handoff"
	"github.com/gns-guard/gns-guard/internal/scopes"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// The gated posture on the real server (docs/gate-attacks.md): agents
// read, the gate's account writes. These tests need no runner: the guard
// runs in process on the payloads Gitea records (actiontest).

// gatedTask is the ## Task section the owner writes.
const gatedTask = "## Task\n\nRate-limit the public API per API key; answer 429 with Retry-After.\n\n"

// gatedIssue is one governed issue in the gated posture: the owner
// opened it, the guard judged its opening and wrote its status comment
// and anchor.
type gatedIssue struct {
	t     *testing.T
	s     *giteatest.Server
	g     *giteatest.Gated
	f     *actiontest.Repo // the capture workflow's runs; Bot is the guard's account
	agent giteatest.Account
	key   string // the ledger key
	n     int64
	// opened is the run the issue's opening recorded; status the
	// guard's status comment.
	opened actiontest.Delivery
	status int64
}

// newGatedIssue sets the gated posture up (giteatest.NewGated, one
// agent), with the settings file of a gated repository, the guard's own
// account in a team with Issues write, and the issue.
func newGatedIssue(t *testing.T) *gatedIssue {
	t.Helper()
	t.Parallel()
	s := giteatest.Require(t)
	g := s.NewGated(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	guard := fmt.Sprintf("gatedguard-%s", g.Org)
	toks, err := s.NewUserScoped(ctx, guard, scopes.Guard.Names())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.AddTeam(ctx, s, "guard", giteatest.GateUnits, guard); err != nil {
		t.Fatal(err)
	}
	fx := &gatedIssue{t: t, s: s, g: g, agent: g.Agents[0], key: strings.Repeat("6b", 32),
		f: &actiontest.Repo{S: s, Owner: g.Org, Name: g.Repo, Runs: actiontest.NewRuns(t, s, g.Org, g.Repo), Bot: guard, Token: toks[0]}}
	fx.f.CommitFile(t, ".gitea/gns-guard.yml", fmt.Sprintf("agents:\n  architect: [%s]\ngate-account: %s\n", fx.agent.Login, g.Gate.Login))
	actiontest.LabelIDs(t, s, g.Org, g.Repo, "cascade::depth-2", "cascade::depth-3", "size::medium", "budget::exhausted")
	owner := actiontest.User{Login: g.Owner.Login, Token: g.Owner.Token}
	fx.n, fx.opened = fx.f.OpenAs(t, owner, "Rate limits", func(n int64) string { return gatedTask + actiontest.Example(t, "healthy.md", n) },
		"cascade::depth-2", "size::medium")
	fx.guard(fx.opened).Expect(t, 0, "pass")
	fx.status = fx.f.Status(t, fx.n).ID
	return fx
}

// guard runs the guard in process on d, with the owner's token as
// admin-token and the ledger key.
func (fx *gatedIssue) guard(d actiontest.Delivery) actiontest.Result {
	fx.t.Helper()
	return fx.f.Step("admin-token", fx.g.Owner.Token, "ledger-key", fx.key).RunInProcess(fx.t, d, actiontest.InProcess{})
}

// request sends a request with token and returns the answer's status and
// body.
func (fx *gatedIssue) request(token, method, path string, in any) (int, string) {
	fx.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code, body, err := fx.s.Request(ctx, token, method, path, in)
	if err != nil {
		fx.t.Fatal(err)
	}
	return code, string(body)
}

// must sends a request as the owner, failing the test unless it succeeds.
func (fx *gatedIssue) must(method, path string, in, out any) {
	fx.t.Helper()
	fx.f.API(fx.t, fx.g.Owner.Token, method, path, in, out)
}

// result is the comment `gns-guard report` posts for agent on this issue
// (handoff.Comment on the body as it is now): header, sections, footer.
func (fx *gatedIssue) result(agent, invocation, verdict string) string {
	fx.t.Helper()
	is := fx.f.Issue(fx.t, fx.n)
	rep := handoff.Report{Agent: agent, Invocation: invocation, Action: "designed the limiter", Consumed: 1200, Status: "ok",
		Verdict: verdict, NextAgent: "lead-developer", NextEstimate: 3000, Result: "A token bucket per key, 100 a minute.", Now: time.Now().UTC()}
	out, err := handoff.Apply(fx.n, is.Body, is.LabelNames(), rep, handoff.Options{HistoryTail: 3, MaxBytes: 64 << 10})
	if err != nil {
		fx.t.Fatal(err)
	}
	return handoff.Comment(rep, out)
}

// gateResult posts a result as the gate's account, as the gate does
// after judging an agent's report, and returns its id. No guard run
// judges it here.
func (fx *gatedIssue) gateResult() int64 {
	fx.t.Helper()
	var c actiontest.Comment
	in := map[string]string{"body": fx.result("architect", "gate-1", "designed")}
	fx.f.API(fx.t, fx.g.Gate.Token, http.MethodPost, fx.f.Path("/issues/%d/comments", fx.n), in, &c)
	return c.ID
}

// ledgerLine is the guard's record in its status comment.
var ledgerLine = regexp.MustCompile(`<!-- gns-guard:ledger v2 (\{.*\}) kid=`)

// gatedRecord is what these tests read of the guard's record
// (docs/ledger.md#what-it-holds): the accepted results, and who can
// write.
type gatedRecord struct {
	Results [][]any `json:"results"`
	Access  struct {
		Writers   []string `json:"writers"`
		Outsiders []string `json:"outsiders"`
	} `json:"access"`
}

// record reads the record the guard's status comment holds.
func (fx *gatedIssue) record() gatedRecord {
	fx.t.Helper()
	body := fx.f.Status(fx.t, fx.n).Body
	m := ledgerLine.FindStringSubmatch(body)
	if m == nil {
		fx.t.Fatalf("the status comment holds no record:\n%s", body)
	}
	var r gatedRecord
	if err := json.Unmarshal([]byte(m[1]), &r); err != nil {
		fx.t.Fatalf("the record: %v\n%s", err, m[1])
	}
	return r
}

// accepted says whether the record counts comment id as a result.
func (r gatedRecord) accepted(id int64) bool {
	for _, ref := range r.Results {
		if len(ref) > 0 && fmt.Sprint(ref[0]) == strconv.FormatInt(id, 10) {
			return true
		}
	}
	return false
}

// gns runs a verb in process with token, as an agent runs it, and returns
// its standard output, standard error and exit code.
func (fx *gatedIssue) gns(token string, args ...string) (string, string, int) {
	fx.t.Helper()
	var out, errb bytes.Buffer
	env := cli.System()
	env.Stdout, env.Stderr = &out, &errb
	env.Getenv = func(string) string { return "" }
	env.AppendFile = func(string, []byte) error { return nil }
	args = append(args, "--repo", fx.g.Org+"/"+fx.g.Repo, "--server", fx.s.URL, "--token", token, "--guard-user", fx.f.Bot)
	if args[0] != "status" {
		args = append(args, "--issue", strconv.FormatInt(fx.n, 10))
	}
	code := cli.Main(context.Background(), args, env)
	return out.String(), errb.String(), code
}
