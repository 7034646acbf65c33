package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/meter"
	"github.com/gns-guard/gns-guard/internal/meterclient"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/meterstore"
	"github.com/gns-guard/gns-guard/internal/receipt"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/standin"
	"net/http/httptest"
	"strconv"
)

// meterKey signs the tests' receipts.
var meterKey, _ = receipt.NewKey([]byte(strings.Repeat("meter-key-", 4)))

// runningMeter is a meter in this process in front of a stand-in
// provider, on the test's server.
type runningMeter struct {
	URL   string
	prov  *standin.Provider
	store *meterstore.Store
	stop  func()
	log   *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// startMeter starts a meter on store dsn (a SQLite file or a PostgreSQL
// URL) for the server of r; the stand-in is prov, or a new one; opts
// change the meter's options before it starts.
func startMeter(t testing.TB, r *actiontest.Repo, dsn string, prov *standin.Provider, opts ...func(*meter.Options)) *runningMeter {
	t.Helper()
	if prov == nil {
		prov = standin.Start(t)
	}
	store, err := meterstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	rm := &runningMeter{prov: prov, store: store, log: &lockedBuffer{}}
	o := meter.Options{Server: r.S.URL, Store: store, Key: meterKey, IssueTTL: time.Millisecond, Log: rm.log, Connect: connectGitea,
		Upstream: map[metering.Provider]string{metering.OpenAI: prov.URL, metering.Anthropic: prov.URL},
		Keys:     map[metering.Provider]string{metering.OpenAI: standin.OpenAIKey, metering.Anthropic: standin.AnthropicKey}}
	for _, f := range opts {
		f(&o)
	}
	m, err := meter.New(o)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Serve(ctx, l, time.Minute) }()
	rm.URL = "http://" + l.Addr().String()
	var once sync.Once
	rm.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("the meter stopped: %v", err)
			}
			store.Close()
		})
	}
	t.Cleanup(rm.stop)
	return rm
}

// chat makes one chat call through the meter as token, for invocation
// inv on issue n, and returns the status and the body.
func (rm *runningMeter) chat(t *testing.T, r *actiontest.Repo, token string, n int64, inv string, maxTokens int, stream bool) (int, string) {
	t.Helper()
	u := fmt.Sprintf("%s/%s/%s/issues/%d/invocations/%s/openai/v1/chat/completions", rm.URL, r.Owner, r.Name, n, inv)
	body := fmt.Sprintf(`{"model":"gpt-4o","max_tokens":%d,"stream":%v,"messages":[{"role":"user","content":"wire the limiter"}]}`, maxTokens, stream)
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error() // the callers' status checks say it
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, string(data)
	}
	return resp.StatusCode, string(data)
}

// meterConfig is the repository's configuration with the meter's key and
// address, and more lines.
func meterConfig(rm *runningMeter, more ...string) string {
	return strings.Join(append([]string{"meter-public-key: " + meterKey.Public(), "meter-url: " + rm.URL}, more...), "\n") + "\n"
}

// On the real server: an agent spends through the meter with its Gitea
// token; the call that would pass the issue's budget is refused; report
// carries the receipt, the guard passes a report at or above it and fails
// one below it.
func TestMeterOnGitea(t *testing.T) {
	t.Parallel()
	f := newFlow(t, 6000, "cascade::depth-2", "size::medium")
	rm := startMeter(t, f.r, filepath.Join(t.TempDir(), "meter.db"), nil)
	f.r.CommitFile(t, ".gitea/gns-guard.yml", meterConfig(rm))
	rm.prov.Output.Store(400)

	status, body := rm.chat(t, f.r, f.agent.Token, f.n, "run-1", 500, false)
	if status != 200 {
		t.Fatalf("the first call: %d %s\n%s", status, body, rm.log)
	}
	status, body = rm.chat(t, f.r, f.agent.Token, f.n, "run-1", 500, true)
	if status != 200 || !strings.Contains(body, "data: [DONE]") || strings.Contains(body, `"usage"`) {
		t.Fatalf("the streamed call: %d %s", status, body)
	}
	// 2 × 412 metered of 6,000: a call of up to 5,500 more would pass it.
	status, body = rm.chat(t, f.r, f.agent.Token, f.n, "run-1", 5500, false)
	if status != 403 || !strings.Contains(body, "meter-over-budget") {
		t.Fatalf("the call over budget: %d %s", status, body)
	}
	if n := len(rm.prov.Requests()); n != 2 {
		t.Errorf("%d calls reached the provider, want 2", n)
	}

	// Below the receipt: report refuses; forced, the guard fails it.
	out, errOut, code := f.report(t, "--agent", "lead-developer", "--invocation", "run-1", "--consumed", "100", "--action", "wired it", "--next-agent", "code-reviewer", "--next-estimate", "500", "--format", "json")
	if code != 1 || !strings.Contains(out, guardRuleUnder) {
		t.Fatalf("a report below its receipt: exit %d\n%s\n%s", code, out, errOut)
	}
	_, errOut, code = f.report(t, "--agent", "lead-developer", "--invocation", "run-1", "--consumed", "100", "--action", "wired it", "--next-agent", "code-reviewer", "--next-estimate", "500", "--force")
	if code != 0 {
		t.Fatalf("report --force: exit %d %s", code, errOut)
	}
	runs := f.guard(t)
	if len(runs) == 0 || !failedWith(t, runs, guardRuleUnder) {
		t.Fatalf("the guard's runs on a report below its receipt: %v", runs)
	}
	// The meter now refuses calls: the guard fails the state.
	status, body = rm.chat(t, f.r, f.agent.Token, f.n, "run-2", 10, false)
	if status != 403 || !strings.Contains(body, guardRuleUnder) {
		t.Errorf("a call on a failing issue: %d %s", status, body)
	}
}

// One repository, one budget, on the real server: Gitea's names ignore
// letter case, and a renamed repository still answers its old name. Calls
// under five spellings of the name, then under the new name and the old
// one after a rename, spend the repository's one budget (the meter keys
// it by the repository's id), and the call that would pass it is refused.
func TestMeterOneBudgetUnderEveryName(t *testing.T) {
	t.Parallel()
	f := newFlow(t, 6000, "cascade::depth-2", "size::medium")
	rm := startMeter(t, f.r, filepath.Join(t.TempDir(), "meter.db"), nil)
	f.r.CommitFile(t, ".gitea/gns-guard.yml", meterConfig(rm))
	rm.prov.Count.Store(true)
	rm.prov.Output.Store(900)
	call := func(owner, name string) int {
		u := fmt.Sprintf("%s/%s/%s/issues/%d/invocations/run-1/openai/v1/chat/completions", rm.URL, owner, name, f.n)
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(`{"model":"gpt-4o","max_tokens":900,"messages":[{"role":"user","content":"wire the limiter"}]}`))
		req.Header.Set("Authorization", "Bearer "+f.agent.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	o, n := f.r.Owner, f.r.Name
	var statuses []int
	for _, s := range [][2]string{{o, n}, {strings.ToUpper(o), n}, {o, strings.ToUpper(n)}, {strings.ToUpper(o[:1]) + o[1:], strings.ToUpper(n[:1]) + n[1:]}, {strings.ToUpper(o), strings.ToUpper(n)}} {
		statuses = append(statuses, call(s[0], s[1]))
	}
	f.r.API(t, f.r.S.AdminToken, http.MethodPatch, f.r.Path(""), map[string]any{"name": n + "-renamed"}, nil)
	statuses = append(statuses, call(o, n+"-renamed"), call(o, n))
	// Each call is about 910 tokens of 6,000: five, then the new name's,
	// go through; the old name's would pass the budget.
	if fmt.Sprint(statuses) != "[200 200 200 200 200 200 403]" {
		t.Errorf("calls under every name of one repository: %v\n%s", statuses, rm.log)
	}
	if got := rm.prov.Charged(); got > 6000 {
		t.Errorf("the provider charged %d, past the budget of 6,000", got)
	}
}

const (
	guardRuleUnder    = "consumption-under-reported"
	guardRuleUnmetred = "consumption-unmetered"
)

// failedWith says some run failed with rule.
func failedWith(t *testing.T, runs []actiontest.Result, rule string) bool {
	for _, r := range runs {
		if r.Code == 1 && strings.Contains(strings.Join(r.Rules(t), ","), rule) {
			return true
		}
	}
	return false
}

// An honest report carries the receipt and passes; under metering:
// required, a result without a receipt fails.
func TestMeterReceiptAndMeteringRequired(t *testing.T) {
	t.Parallel()
	f := newFlow(t, 30000, "cascade::depth-2", "size::medium")
	rm := startMeter(t, f.r, filepath.Join(t.TempDir(), "meter.db"), nil)
	f.r.CommitFile(t, ".gitea/gns-guard.yml", meterConfig(rm, "metering: required"))
	if status, body := rm.chat(t, f.r, f.agent.Token, f.n, "run-1", 100, false); status != 200 {
		t.Fatalf("call: %d %s", status, body)
	}
	out, errOut, code := f.report(t, "--agent", "lead-developer", "--invocation", "run-1", "--consumed", "500", "--action", "wired it", "--next-agent", "code-reviewer", "--next-estimate", "500", "--format", "json")
	if code != 0 {
		t.Fatalf("an honest report: exit %d\n%s\n%s", code, out, errOut)
	}
	res := decodeReport(t, out)
	c := f.r.Comments(t, f.n)
	last := c[len(c)-1].Body
	if !strings.Contains(last, `"metered":{`) || !strings.Contains(last, "**Metered**: 32 tokens in 1 calls") {
		t.Fatalf("the result comment carries no receipt (comment %d):\n%s", res.CommentID, last)
	}
	for _, run := range f.guard(t) {
		if run.Code != 0 {
			t.Fatalf("the guard failed an honest metered report: %s", run)
		}
	}
	status := f.r.GuardComments(t, f.n, actiontest.StatusMarker(f.n))
	if len(status) != 1 || !strings.Contains(status[0].Body, "**Metered** 32 tokens by the meter's receipts of the last 1 results; their reports added 500") {
		t.Errorf("the status comment does not show metered next to reported: %v", status)
	}
	out, errOut, code = gns(t, nil, "status", "--repo", f.r.Owner+"/"+f.r.Name, "--server", f.r.S.URL, "--token", f.agent.Token, "--guard-user", f.r.Bot, "--format", "json")
	var rows []struct {
		Number  int64 `json:"number"`
		Metered *struct {
			Calls, Tokens int64
		} `json:"metered"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || rows[0].Metered == nil || rows[0].Metered.Tokens != 32 || rows[0].Metered.Calls != 1 {
		t.Errorf("status shows no metered figures: exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	// Without the meter's address, report writes no receipt: refused, and
	// forced, the guard fails the result.
	f.r.CommitFile(t, ".gitea/gns-guard.yml", strings.Join([]string{"meter-public-key: " + meterKey.Public(), "metering: required"}, "\n")+"\n")
	out, _, code = f.report(t, "--agent", "code-reviewer", "--invocation", "run-2", "--consumed", "500", "--action", "reviewed it", "--next-agent", "lead-developer", "--next-estimate", "500", "--format", "json")
	if code != 1 || !strings.Contains(out, guardRuleUnmetred) {
		t.Fatalf("a result without a receipt under metering: required: exit %d\n%s", code, out)
	}
	if _, errOut, code = f.report(t, "--agent", "code-reviewer", "--invocation", "run-2", "--consumed", "500", "--action", "reviewed it", "--next-agent", "lead-developer", "--next-estimate", "500", "--force"); code != 0 {
		t.Fatalf("report --force: %d %s", code, errOut)
	}
	if runs := f.guard(t); !failedWith(t, runs, guardRuleUnmetred) {
		t.Errorf("the guard's runs on an unmetered result: %v", runs)
	}
}

// A locked issue, and an issue the guard never judged, get no call.
func TestMeterRefusesLockedAndUnjudgedIssues(t *testing.T) {
	t.Parallel()
	f := newFlow(t, 30000, "cascade::depth-2", "size::medium")
	rm := startMeter(t, f.r, filepath.Join(t.TempDir(), "meter.db"), nil)
	unjudged := actiontest.CreateIssue(t, f.r.S, f.r.Owner, f.r.Name, "not judged", func(n int64) string { return issueWithBudget(n, 30000, "cascade::depth-2") }, "cascade::depth-2")
	if status, body := rm.chat(t, f.r, f.agent.Token, unjudged, "run-1", 10, false); status != 403 || !strings.Contains(body, "meter-unjudged") {
		t.Errorf("an issue the guard never judged: %d %s", status, body)
	}
	f.r.API(t, f.r.S.AdminToken, http.MethodPut, f.r.Path("/issues/%d/lock", f.n), map[string]string{"lock_reason": "resolved"}, nil)
	if status, body := rm.chat(t, f.r, f.agent.Token, f.n, "run-1", 10, false); status != 403 || !strings.Contains(body, "meter-issue-locked") {
		t.Errorf("a locked issue: %d %s", status, body)
	}
	if n := len(rm.prov.Requests()); n != 0 {
		t.Errorf("%d calls reached the provider", n)
	}
}

// storeKey is the key the meter's store holds the repository of r by.
func storeKey(t *testing.T, r *actiontest.Repo) string {
	var repo struct {
		ID int64 `json:"id"`
	}
	r.API(t, r.S.AdminToken, http.MethodGet, r.Path(""), nil, &repo)
	return meter.RepoKey(repo.ID)
}

func decodeJSON(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }

// connectGitea connects the meter to the real server, as the binary does.
func connectGitea(server, token, owner, name string) (meter.Client, error) {
	return forge.New(server, token, owner, name)
}

// The agent chooses no figure the guard checks: it keeps a genuine
// receipt of its first call, spends more under the same invocation, and
// reports the first call's total with the saved receipt, handed to report
// by a server of its own (--meter-url). The guard reads the issue's
// statement at the meter the settings file names and fails the report.
func TestTheGuardAsksTheMeterItself(t *testing.T) {
	t.Parallel()
	f := newFlow(t, 30000, "cascade::depth-2", "size::medium")
	rm := startMeter(t, f.r, filepath.Join(t.TempDir(), "meter.db"), nil)
	f.r.CommitFile(t, ".gitea/gns-guard.yml", meterConfig(rm, "metering: required"))
	rm.prov.Output.Store(600)
	if status, body := rm.chat(t, f.r, f.agent.Token, f.n, "run-1", 600, false); status != 200 {
		t.Fatalf("the first call: %d %s", status, body)
	}
	saved, err := meterclient.Client{Base: rm.URL, Token: f.agent.Token}.Receipt(context.Background(), f.r.Owner, f.r.Name, f.n, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if status, body := rm.chat(t, f.r, f.agent.Token, f.n, "run-1", 600, false); status != 200 {
			t.Fatalf("a further call: %d %s", status, body)
		}
	}
	own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(saved)
	}))
	defer own.Close()
	consumed := strconv.FormatInt(saved.Tokens, 10)
	if _, errOut, code := f.report(t, "--agent", "lead-developer", "--invocation", "run-1", "--consumed", consumed, "--action", "wired it",
		"--next-agent", "code-reviewer", "--next-estimate", "500", "--meter-url", own.URL, "--force"); code != 0 {
		t.Fatalf("report with the saved receipt: exit %d %s", code, errOut)
	}
	runs := f.guard(t)
	if !failedWith(t, runs, guardRuleUnder) {
		t.Fatalf("the guard passed a report of %s tokens on an invocation that spent 4 calls: %v", consumed, runs)
	}
	status := f.r.GuardComments(t, f.n, actiontest.StatusMarker(f.n))
	if len(status) != 1 || !strings.Contains(status[0].Body, "since the meter first read the issue") {
		t.Errorf("the status comment does not say the metered total: %v", status)
	}
}

// doctor asks the meter the settings name what it serves and with which
// key it signs: a meter started for another owner, or a published key
// that is not the meter's, is a guarantee that does not hold.
func TestDoctorShowsTheMetersScope(t *testing.T) {
	t.Parallel()
	f := newFlow(t, 30000, "cascade::depth-2", "size::medium")
	doctor := func(rm *runningMeter, published string) map[string]doctorLine {
		t.Helper()
		f.r.CommitFile(t, ".gitea/gns-guard.yml", "meter-public-key: "+published+"\nmeter-url: "+rm.URL+"\n")
		out, errOut, _ := gns(t, nil, "doctor", "--repo", f.r.Owner+"/"+f.r.Name, "--server", f.r.S.URL, "--token", f.agent.Token, "--format", "json")
		var checks []doctorLine
		if err := json.Unmarshal([]byte(out), &checks); err != nil {
			t.Fatalf("doctor: %v\n%s\n%s", err, out, errOut)
		}
		by := map[string]doctorLine{}
		for _, c := range checks {
			by[c.ID] = c
		}
		return by
	}
	other := startMeter(t, f.r, filepath.Join(t.TempDir(), "other.db"), nil, func(o *meter.Options) { o.Scope = []string{"someone-else"} })
	got := doctor(other, meterKey.Public())
	if c := got["meter.scope"]; c.State != "broken" || !strings.Contains(c.Why, "serves someone-else, not "+f.r.Owner+"/"+f.r.Name) {
		t.Errorf("a meter for another owner: %+v", c)
	}
	ours := startMeter(t, f.r, filepath.Join(t.TempDir(), "ours.db"), nil, func(o *meter.Options) { o.Scope = []string{f.r.Owner} })
	got = doctor(ours, meterKey.Public())
	if c, k := got["meter.scope"], got["meter.key"]; c.State != "holds" || k.State != "holds" {
		t.Errorf("the team's meter: %+v %+v", c, k)
	}
	otherKey, _ := receipt.NewKey([]byte(strings.Repeat("x", 40)))
	if k := doctor(ours, otherKey.Public())["meter.key"]; k.State != "broken" || !strings.Contains(k.Why, "every receipt and the metered total fail to verify") {
		t.Errorf("a published key not the meter's: %+v", k)
	}
}

// doctorLine is a check as doctor --format json prints it.
type doctorLine struct {
	ID    string `json:"id"`
	State string `json:"state"`
	Why   string `json:"why"`
}

// One base URL for every run: the agent's calls name the issue and no
// invocation; the meter opens one for its login, report without
// --invocation takes it with its receipt, a re-run of that report writes
// nothing twice, and the next run's calls open the next invocation.
func TestOneBaseURLForEveryRun(t *testing.T) {
	t.Parallel()
	f := newFlow(t, 30000, "cascade::depth-2", "size::medium")
	rm := startMeter(t, f.r, filepath.Join(t.TempDir(), "meter.db"), nil)
	f.r.CommitFile(t, ".gitea/gns-guard.yml", meterConfig(rm, "metering: required"))
	rm.prov.Output.Store(300)
	call := func() {
		t.Helper()
		u := fmt.Sprintf("%s/%s/%s/issues/%d/openai/v1/chat/completions", rm.URL, f.r.Owner, f.r.Name, f.n)
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(`{"model":"gpt-4o","max_tokens":300,"messages":[{"role":"user","content":"wire the limiter"}]}`))
		req.Header.Set("Authorization", "Bearer "+f.agent.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("a call naming no invocation: %d %s", resp.StatusCode, data)
		}
	}
	call()
	call()
	first := "open-" + f.agent.Login + "-1"
	report := func() reportJSON {
		t.Helper()
		out, errOut, code := f.report(t, "--agent", "lead-developer", "--consumed", "1000", "--action", "wired it", "--next-agent", "code-reviewer", "--next-estimate", "500", "--format", "json")
		if code != 0 {
			t.Fatalf("report without --invocation: exit %d\n%s\n%s", code, out, errOut)
		}
		return decodeReport(t, out)
	}
	if res := report(); !res.Posted {
		t.Fatalf("the report posted nothing: %+v", res)
	}
	c := f.r.Comments(t, f.n)
	if last := c[len(c)-1].Body; !strings.Contains(last, `"invocation":"`+first+`"`) || !strings.Contains(last, `"metered":{`) || !strings.Contains(last, "in 2 calls") {
		t.Fatalf("the result does not report %s with its receipt:\n%s", first, last)
	}
	for _, run := range f.guard(t) {
		if run.Code != 0 {
			t.Fatalf("the guard failed a report of the meter's invocation: %s", run)
		}
	}
	if res := report(); res.Posted || res.Patched {
		t.Errorf("a re-run of the report wrote again: %+v", res)
	}
	call()
	cur, err := meterclient.Client{Base: rm.URL, Token: f.agent.Token}.Current(context.Background(), f.r.Owner, f.r.Name, f.n)
	if want := "open-" + f.agent.Login + "-2"; err != nil || cur.Invocation != want || cur.Reported {
		t.Errorf("the next run's invocation: %+v %v; want %s", cur, err, want)
	}
}
