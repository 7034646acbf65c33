package cli_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bufio"
	"github.com/gns-guard/gns-guard/internal/meter"
	"github.com/gns-guard/gns-guard/internal/meterstore"
	"github.com/gns-guard/gns-guard/internal/receipt"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
	"github.com/gns-guard/gns-guard/internal/testkit/pgtest"
	"io"
)

// 20 agents on 5 issues at once, each spending through the meter until it
// is refused, with the meter stopped (SIGTERM's drain) and started again
// on the same store half way: no issue's metered spend passes its budget
// (the reservation holds each call's worst case), every call a client saw
// answered is in the store, settled, and each invocation's receipt is
// what its agent's client counted. SQLite and PostgreSQL alike.
func TestMeterTwentyAgentsFiveIssues(t *testing.T) {
	t.Parallel()
	r := actiontest.NewRepo(t)
	const issuesN, perIssue, budget = 5, 4, 8000
	var ns []int64
	for range issuesN {
		n, d := r.Open(t, "load", func(n int64) string { return issueWithBudget(n, budget, "cascade::depth-2, size::medium") }, "cascade::depth-2", "size::medium")
		if res := r.Step().RunInProcess(t, d, actiontest.InProcess{}); res.Code != 0 {
			t.Fatalf("the guard's first run: %s", res)
		}
		ns = append(ns, n)
	}
	var agents []actiontest.User
	for range issuesN * perIssue {
		agents = append(agents, r.User(t, "agent", giteatest.PermWrite))
	}
	totals := map[string]map[int64]int64{}
	for _, store := range []struct{ name, dsn string }{
		{"sqlite", filepath.Join(t.TempDir(), "meter.db")},
		{"postgres", pgtest.Require(t)},
	} {
		t.Run(store.name, func(t *testing.T) {
			totals[store.name] = loadRun(t, r, store.dsn, ns, agents, budget)
		})
	}
	// Each call is charged the same: both stores admit as many.
	if fmt.Sprint(totals["sqlite"]) != fmt.Sprint(totals["postgres"]) {
		t.Errorf("the stores disagree: sqlite %v, postgres %v", totals["sqlite"], totals["postgres"])
	}
}

// loadRun is one run of the agents against a fresh meter on dsn; each
// run spends under its own invocations, on a budget of its own: the
// store's running figures are per invocation.
func loadRun(t *testing.T, r *actiontest.Repo, dsn string, ns []int64, agents []actiontest.User, budget int64) map[int64]int64 {
	rm := startMeter(t, r, dsn, nil)
	rm.prov.Output.Store(300)
	rm.prov.Delay.Store(int64(time.Millisecond))
	var url atomic.Pointer[runningMeter]
	url.Store(rm)
	ok := make([]atomic.Int64, len(agents))
	var answered atomic.Int64
	restarted := make(chan struct{})
	var wg sync.WaitGroup
	run := fmt.Sprintf("%d", time.Now().UnixNano())
	for i, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := ns[i%len(ns)]
			inv := fmt.Sprintf("load-%s-%d", run, i)
			for tries := 0; tries < 400; tries++ {
				status, _ := url.Load().chat(t, r, a.Token, n, inv, 300, i%2 == 0)
				switch status {
				case 200:
					ok[i].Add(1)
					answered.Add(1)
				case 403:
					return
				default:
					// The meter is restarting: try again shortly.
					time.Sleep(20 * time.Millisecond)
				}
			}
			t.Errorf("agent %d was never refused", i)
		}()
	}
	// Half way, stop the meter and start another on the same store.
	go func() {
		defer close(restarted)
		for answered.Load() < 40 {
			time.Sleep(5 * time.Millisecond)
		}
		old := url.Load()
		next := startMeter(t, r, dsn, old.prov)
		url.Store(next)
		old.stop() // lets the calls in flight finish
		if !strings.Contains(old.log.String(), " ok\n") {
			t.Errorf("the first meter answered no call")
		}
	}()
	wg.Wait()
	<-restarted
	if !strings.Contains(url.Load().log.String(), " ok\n") {
		t.Errorf("the second meter answered no call")
	}
	return checkLoad(t, r, url.Load(), ns, agents, ok, run, budget)
}

// checkLoad checks the store against what the clients saw.
func checkLoad(t *testing.T, r *actiontest.Repo, rm *runningMeter, ns []int64, agents []actiontest.User, ok []atomic.Int64, run string, budget int64) map[int64]int64 {
	ctx := context.Background()
	perIssue := map[int64]int64{}
	key := storeKey(t, r)
	for i := range agents {
		n := ns[i%len(ns)]
		inv := fmt.Sprintf("load-%s-%d", run, i)
		// The receipt first: it waits for the settlements of the calls answered.
		rc := getReceiptAs(t, rm, r, agents[i].Token, n, inv)
		tot, err := rm.store.Invocation(ctx, meterstore.Issue{Repo: key, Number: n}, inv)
		if err != nil {
			t.Fatal(err)
		}
		want := ok[i].Load() * (12 + 300)
		if tot.InFlight != 0 || tot.Tokens != want {
			t.Errorf("agent %d: the store holds %d tokens in %d calls (%d in flight); its client saw %d calls answered, %d tokens", i, tot.Tokens, tot.Calls, tot.InFlight, ok[i].Load(), want)
		}
		perIssue[n] += tot.Tokens
		if rc.Tokens != tot.Tokens || receipt.Verify(&rc, meterKey.Public(), receipt.For{Repo: r.Owner + "/" + r.Name, Issue: n, Invocation: inv}) != nil {
			t.Errorf("agent %d: receipt %+v", i, rc)
		}
	}
	for _, n := range ns {
		t.Logf("issue #%d: %d of %d tokens metered", n, perIssue[n], budget)
		if perIssue[n] > budget {
			t.Errorf("issue #%d: %d tokens metered, over its budget of %d", n, perIssue[n], budget)
		}
	}
	if strings.Count(rm.log.String(), "settle-failed") > 0 {
		t.Errorf("settlements failed:\n%s", rm.log)
	}
	return perIssue
}

// settled waits until the calls rm answered are settled: the
// repository's metered listing waits for them.
func (rm *runningMeter) settled(t *testing.T, r *actiontest.Repo, token string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/%s/%s/metered", rm.URL, r.Owner, r.Name), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET metered: %d", resp.StatusCode)
	}
}

func getReceiptAs(t *testing.T, rm *runningMeter, r *actiontest.Repo, token string, n int64, inv string) receipt.Receipt {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/%s/%s/issues/%d/invocations/%s/receipt", rm.URL, r.Owner, r.Name, n, inv), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rc receipt.Receipt
	_ = decodeJSON(resp, &rc)
	return rc
}

// Two meters on one PostgreSQL database, as replicas behind a load
// balancer: twenty agents on two issues call at once, half of them through
// each meter, each call's worst case (2,812 tokens) such that two fit an
// issue's budget of 6,000 after the warm-up's 260, and three do not. Each issue admits two calls, whichever
// meter took them; what the provider charged is what the store holds.
func TestTwoMetersOnOnePostgres(t *testing.T) {
	t.Parallel()
	r := actiontest.NewRepo(t)
	const budget, agentsN = 6000, 20
	var ns []int64
	for range 2 {
		n, d := r.Open(t, "replicas", func(n int64) string { return issueWithBudget(n, budget, "cascade::depth-2, size::medium") }, "cascade::depth-2", "size::medium")
		if res := r.Step().RunInProcess(t, d, actiontest.InProcess{}); res.Code != 0 {
			t.Fatalf("the guard's first run: %s", res)
		}
		ns = append(ns, n)
	}
	var agents []actiontest.User
	for range agentsN {
		agents = append(agents, r.User(t, "replica", giteatest.PermWrite))
	}
	dsn := pgtest.Require(t)
	cached := func(o *meter.Options) { o.IssueTTL = time.Minute }
	a := startMeter(t, r, dsn, nil, cached)
	b := startMeter(t, r, dsn, a.prov, cached)
	a.prov.Output.Store(2900)
	a.prov.Delay.Store(int64(100 * time.Millisecond)) // the reservations overlap
	meters := []*runningMeter{a, b}
	// Warm both meters' caches (the agents, the issues), so that the
	// calls below race at the store.
	for i, agent := range agents {
		for _, m := range meters {
			if status, body := m.chat(t, r, agent.Token, ns[(i/2)%2], "warm-up", 1, false); status != 200 {
				t.Fatalf("warm-up: %d %s", status, body)
			}
		}
	}
	start := make(chan struct{})
	admitted := make([]atomic.Int64, len(ns))
	var wg sync.WaitGroup
	for i, agent := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			status, body := meters[i%2].chat(t, r, agent.Token, ns[(i/2)%2], fmt.Sprintf("replica-%d", i), 2800, false)
			switch status {
			case 200:
				admitted[(i/2)%2].Add(1)
			case 403:
			default:
				t.Errorf("agent %d: %d %s", i, status, body)
			}
		}()
	}
	close(start)
	wg.Wait()
	for _, m := range meters {
		m.settled(t, r, agents[0].Token)
	}
	key := storeKey(t, r)
	var held int64
	for k, n := range ns {
		rows, err := a.store.Calls(context.Background(), meterstore.Issue{Repo: key, Number: n})
		if err != nil {
			t.Fatal(err)
		}
		var spent int64
		for _, c := range rows {
			spent += c.Tokens
		}
		t.Logf("issue #%d: %d calls admitted by two meters, %d of %d tokens metered", n, admitted[k].Load(), spent, budget)
		if spent > budget || admitted[k].Load() != 2 {
			t.Errorf("issue #%d: %d calls admitted, %d tokens metered; want 2 calls within its budget of %d", n, admitted[k].Load(), spent, budget)
		}
		held += spent
	}
	if charged := a.prov.Charged(); charged != held {
		t.Errorf("the provider charged %d, the store holds %d", charged, held)
	}
}

// A replica killed in the middle of a stream loses no receipt: its call
// was reserved at its worst case before it went upstream, and the store
// still holds it so; the other replica serves on, and the invocation's
// receipt, asked of it, counts the killed call at its worst case.
func TestAKilledReplicaLosesNoReceipt(t *testing.T) {
	t.Parallel()
	f := newFlow(t, 30000, "cascade::depth-2", "size::medium")
	dsn := pgtest.Require(t)
	b := startMeter(t, f.r, dsn, nil)
	b.prov.Output.Store(60)
	b.prov.Delay.Store(int64(50 * time.Millisecond))
	a := startMeterProcess(t, f, b.prov.URL, dsn, "--issue-ttl", "1ms")
	killed := &runningMeter{URL: a.URL}
	u := fmt.Sprintf("%s/%s/%s/issues/%d/invocations/run-1/openai/v1/chat/completions", killed.URL, f.r.Owner, f.r.Name, f.n)
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(`{"model":"gpt-4o","max_tokens":60,"stream":true,"messages":[{"role":"user","content":"wire the limiter"}]}`))
	req.Header.Set("Authorization", "Bearer "+f.agent.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the stream through the meter process: %v %v\n%s", resp, err, a.Log)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatalf("no first event: %v", err)
	}
	if err := a.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait()
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if status, body := b.chat(t, f.r, f.agent.Token, f.n, "run-2", 10, false); status != 200 {
		t.Fatalf("the other replica after the kill: %d %s", status, body)
	}
	rc := getReceiptAs(t, b, f.r, f.agent.Token, f.n, "run-1")
	charged := b.prov.Requests()[0].Charged
	if rc.Calls != 1 || rc.Tokens < charged || rc.WorstCase != rc.Tokens {
		t.Errorf("the receipt of the killed call: %+v; the provider charged %d, the receipt must hold it at its worst case", rc, charged)
	}
}
