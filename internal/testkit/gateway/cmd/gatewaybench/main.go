// Command gatewaybench measures gns-guard meter beside Portkey's
// open-source AI gateway (package gateway), for reading: nothing in it
// passes or fails on a timing.
//
//	go run ./internal/testkit/gateway/cmd/gatewaybench [-rounds 3] [-calls 2000] [-streams 500] [-clients 16] [-for 10s]
//
// It is a command rather than a Benchmark function because its work is a
// fixed plan (so many calls, so many seconds, rounds interleaved across
// the paths) that prints one table, where a benchmark's b.N would rerun
// and rescale it; and a command never runs under go test. .ci/bench runs
// it when GNS_GUARD_BENCH_GATEWAYS=1.
//
// The same stand-in provider (internal/testkit/standin) answers every
// call, and the same keep-alive HTTP client makes them, by three paths:
// straight to the stand-in (direct), through Portkey (started by package
// gateway, a Node process), and through the meter, in this process, on a
// fake Gitea (internal/testkit/fakeforge) whose issue #7 the guard judged,
// with a budget no run spends: the rig of internal/meter's benchmarks,
// built with exported APIs. Each round runs, path by path (the order
// turning each round): sequential non-stream chat calls (p50, p99),
// streamed calls (p50 time to the first event; the rest of each stream is
// read, so the connection is kept), and concurrent clients calling for a
// while (calls per second). The peak RSS is VmHWM of /proc/PID/status:
// Portkey's node process's, and for the meter this Go process's, which
// also holds the stand-in and the client.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/meter"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/meterstore"
	"github.com/gns-guard/gns-guard/internal/receipt"
	"github.com/gns-guard/gns-guard/internal/testkit"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
	"github.com/gns-guard/gns-guard/internal/testkit/gateway"
	"github.com/gns-guard/gns-guard/internal/testkit/standin"
)

// call is one chat call of a short prompt, as an agent makes it: the
// body of internal/meter's BenchmarkCall.
const call = `{"model":"gpt-4o","max_tokens":20,"messages":[{"role":"system","content":"You are the lead developer."},{"role":"user","content":"Wire the limiter into the gateway config and say what changed."}]}`

var stream = strings.Replace(call, `"max_tokens":20`, `"max_tokens":20,"stream":true`, 1)

// agentToken is the Gitea token of the agent calling through the meter.
const agentToken = "gitea-token-of-coder"

type plan struct {
	rounds, calls, streams, clients int
	load                            time.Duration
}

func main() {
	var p plan
	flag.IntVar(&p.rounds, "rounds", 3, "rounds, interleaved across the paths")
	flag.IntVar(&p.calls, "calls", 2000, "sequential non-stream calls per path and round")
	flag.IntVar(&p.streams, "streams", 500, "sequential streamed calls per path and round")
	flag.IntVar(&p.clients, "clients", 16, "concurrent clients of the load")
	flag.DurationVar(&p.load, "for", 10*time.Second, "how long the concurrent clients call, per path and round")
	flag.Parse()
	// Interrupted, every call ends at once and run stops Portkey and
	// removes what it made, as when it is done.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	err := run(ctx, p)
	if ctx.Err() != nil {
		err = errors.New("interrupted")
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gatewaybench:", err)
		os.Exit(1)
	}
}

// path is one way to the stand-in, and what was measured on it.
type path struct {
	name   string
	url    string
	header http.Header
	pid    int // the process whose peak RSS is reported

	seq, firstByte []time.Duration
	rates          []float64
	peakRSS        int64 // bytes
}

// cleanups run when the command ends (standin.Start registers its
// server's Close here).
type cleanups []func()

func (c *cleanups) Cleanup(f func()) { *c = append(*c, f) }

func (c cleanups) run() {
	for i := len(c) - 1; i >= 0; i-- {
		c[i]()
	}
}

func run(ctx context.Context, p plan) (err error) {
	var done cleanups
	defer func() { done.run() }()
	prov := standin.Start(&done)
	prov.Unrecorded.Store(true)

	meterURL, err := startMeter(&done, prov.URL)
	if err != nil {
		return err
	}
	log, err := os.CreateTemp("", "gatewaybench-portkey-*.log")
	if err != nil {
		return err
	}
	defer func() {
		log.Close()
		if err == nil {
			os.Remove(log.Name())
		}
	}()
	fmt.Fprintln(os.Stderr, "starting Portkey's gateway (npm ci on the first run); its output goes to", log.Name(), "(kept if this fails)")
	gw, err := gateway.Start(log)
	if err != nil {
		return err
	}
	done.Cleanup(gw.Stop)

	paths := []*path{
		{name: "direct", url: prov.URL + "/v1/chat/completions", header: auth(standin.OpenAIKey)},
		{name: "Portkey", url: gw.URL + "/v1/chat/completions", header: auth(standin.OpenAIKey), pid: gw.PID},
		{name: "meter", url: meterURL + "/acme/app/issues/7/invocations/inv-1/openai/v1/chat/completions", header: auth(agentToken), pid: os.Getpid()},
	}
	for k, v := range gateway.Headers(prov.URL) {
		paths[1].header[k] = v
	}
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	if err := warmUp(ctx, c, paths); err != nil {
		return err
	}
	for r := range p.rounds {
		order := append(slices.Clone(paths[r%len(paths):]), paths[:r%len(paths)]...)
		if err := round(ctx, c, p, order); err != nil {
			return err
		}
		for _, x := range order {
			fmt.Fprintf(os.Stderr, "round %d/%d %-8s p50 %7.3f ms  p99 %7.3f ms  first byte p50 %7.3f ms  %7.0f calls/s\n", r+1, p.rounds, x.name,
				ms(pct(x.seq[len(x.seq)-p.calls:], 50)), ms(pct(x.seq[len(x.seq)-p.calls:], 99)), ms(pct(x.firstByte[len(x.firstByte)-p.streams:], 50)), x.rates[len(x.rates)-1])
		}
	}
	for _, x := range paths {
		if x.pid != 0 {
			if x.peakRSS, err = peakRSS(x.pid); err != nil {
				return err
			}
		}
	}
	return report(os.Stdout, p, paths)
}

func auth(key string) http.Header {
	return http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {"application/json"}}
}

// warmUp checks every path answers a call and a stream in full, then
// makes a few hundred calls on each, not counted.
func warmUp(ctx context.Context, c *http.Client, paths []*path) error {
	for _, x := range paths {
		body, err := post(ctx, c, x, call)
		if err != nil || !strings.Contains(body, `"chat.completion"`) {
			return fmt.Errorf("%s: a call: %v %.300s", x.name, err, body)
		}
		body, err = post(ctx, c, x, stream)
		if err != nil || !strings.Contains(body, "data: [DONE]") {
			return fmt.Errorf("%s: a stream: %v %.300s", x.name, err, body)
		}
		for range 200 {
			if _, err := post(ctx, c, x, call); err != nil {
				return fmt.Errorf("%s: %w", x.name, err)
			}
		}
	}
	return nil
}

// round runs each measure on every path, in order.
func round(ctx context.Context, c *http.Client, p plan, order []*path) error {
	for _, x := range order {
		for range p.calls {
			start := time.Now()
			if _, err := post(ctx, c, x, call); err != nil {
				return fmt.Errorf("%s: %w", x.name, err)
			}
			x.seq = append(x.seq, time.Since(start))
		}
	}
	for _, x := range order {
		for range p.streams {
			d, err := firstByte(ctx, c, x)
			if err != nil {
				return fmt.Errorf("%s: a stream: %w", x.name, err)
			}
			x.firstByte = append(x.firstByte, d)
		}
	}
	for _, x := range order {
		settle()
		rate, err := load(ctx, c, x, p.clients, p.load)
		if err != nil {
			return fmt.Errorf("%s: %d clients: %w", x.name, p.clients, err)
		}
		x.rates = append(x.rates, rate)
	}
	return nil
}

func request(ctx context.Context, x *path, body string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, x.url, strings.NewReader(body))
	for k, v := range x.header {
		req.Header[k] = v
	}
	return req
}

// post makes a call and reads its answer whole.
func post(ctx context.Context, c *http.Client, x *path, body string) (string, error) {
	resp, err := c.Do(request(ctx, x, body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d: %.300s", resp.StatusCode, data)
	}
	return string(data), err
}

// firstByte is the time from sending a streamed call to its first event's
// first line; the rest of the stream is read after, untimed.
func firstByte(ctx context.Context, c *http.Client, x *path) (time.Duration, error) {
	start := time.Now()
	resp, err := c.Do(request(ctx, x, stream))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(line, "data: ") {
		return 0, fmt.Errorf("status %d, first line %.200q", resp.StatusCode, line)
	}
	_, err = io.Copy(io.Discard, br)
	return d, err
}

// settle lets the previous path's load end its work (a collection, the
// store's writes) before the next path's load is timed.
func settle() {
	runtime.GC()
	time.Sleep(time.Second)
}

// load has n clients call for d, each a call after the other, and
// returns the calls per second they made in all.
func load(ctx context.Context, c *http.Client, x *path, n int, d time.Duration) (float64, error) {
	var (
		calls atomic.Int64
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	start := time.Now()
	deadline := start.Add(d)
	for range n {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if _, err := post(ctx, c, x, call); err != nil {
					once.Do(func() { first = err })
					return
				}
				calls.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(calls.Load()) / time.Since(start).Seconds(), first
}

// peakRSS is VmHWM of /proc/PID/status, in bytes.
func peakRSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// startMeter starts a meter in this process in front of the stand-in at
// upstream, on a fake Gitea where coder (agentToken) writes acme/app and
// issue #7 is governed, judged, with a budget no run spends; every call
// it serves after the first is a cache hit, as in internal/meter's
// benchmarks. It returns the meter's URL.
func startMeter(done *cleanups, upstream string) (string, error) {
	forge := fakeforge.New("acme/app")
	forge.Token(agentToken, "coder")
	forge.Grant("coder", "write")
	text, err := issueBody(7, 1e12, 1e12-6200)
	if err != nil {
		return "", err
	}
	forge.AddIssue(issues.Issue{Number: 7, Body: text, Labels: []issues.Label{{ID: 1, Name: "cascade::depth-2"}, {ID: 2, Name: "size::medium"}}}, "alice")
	if err := judge(forge, 7); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "gatewaybench-")
	if err != nil {
		return "", err
	}
	done.Cleanup(func() { os.RemoveAll(dir) })
	store, err := meterstore.Open(context.Background(), filepath.Join(dir, "meter.db"))
	if err != nil {
		return "", err
	}
	done.Cleanup(func() { store.Close() })
	key, err := receipt.NewKey([]byte(strings.Repeat("s", 40)))
	if err != nil {
		return "", err
	}
	m, err := meter.New(meter.Options{
		Server: "http://gitea.invalid", Store: store, Key: key,
		Connect:  func(_, token, _, _ string) (meter.Client, error) { return forge.Dial(token), nil },
		Upstream: map[metering.Provider]string{metering.OpenAI: upstream},
		Keys:     map[metering.Provider]string{metering.OpenAI: standin.OpenAIKey},
		IssueTTL: time.Hour,
		// Metrics on, as on a scraped meter: every call counts in them.
		MetricsToken: "gatewaybench",
	})
	if err != nil {
		return "", err
	}
	srv := httptest.NewServer(m.Handler())
	done.Cleanup(srv.Close)
	return srv.URL, nil
}

// issueBody is examples/issues/healthy.md as issue n, its budget at
// remaining tokens left of total.
func issueBody(n, total, remaining int64) (string, error) {
	root, err := testkit.Root()
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join(root, "examples", "issues", "healthy.md"))
	if err != nil {
		return "", err
	}
	s := string(data)
	s = strings.Replace(s, "issue: 42", fmt.Sprintf("issue: %d", n), 1)
	s = strings.Replace(s, "total: 20000", fmt.Sprintf("total: %d", total), 1)
	s = strings.Replace(s, "consumed: 6200", fmt.Sprintf("consumed: %d", total-remaining), 1)
	s = strings.Replace(s, "remaining: 13800", fmt.Sprintf("remaining: %d", remaining), 1)
	return s, nil
}

// judge runs the guard on issue n as its run on "opened" would, and posts
// its status comment with the ledger: what the guard's run leaves on a
// governed issue, and what the meter reads.
func judge(forge *fakeforge.Server, n int64) error {
	forge.Change(n, func(is *issues.Issue) {
		is.ContentVersion = 0 // as opened: Gitea's first version
		is.UpdatedAt = time.Now()
	})
	in := guard.Input{Config: config.Default(), Issue: forge.Issue(n), Event: issues.Event{Name: "issues", Action: "opened", Number: n},
		Self: issues.ActionsUser, Repo: forge.Repo(), Now: time.Now().UTC()}
	decision := guard.Decide(in)
	if len(decision.Violations) > 0 || decision.Ledger == nil {
		return fmt.Errorf("the guard fails issue #%d: %v", n, decision.Violations)
	}
	l := *decision.Ledger
	l.Written = time.Now().Unix()
	status := issues.StatusMarker(n) + "\n## ✅ gns-guard: all clear\n" + ledger.Encode(l, nil) + "\n"
	forge.AddComment(n, issues.Comment{ID: 900 + n, Author: issues.ActionsUser, Body: status, UpdatedAt: time.Now()})
	return nil
}

// pct is the q-th percentile of d.
func pct(d []time.Duration, q int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*q/100)]
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// report prints the table: the latencies over every round's calls, the
// calls per second a mean over the rounds, with the lowest and highest
// round.
func report(w io.Writer, p plan, paths []*path) error {
	fmt.Fprintf(w, "\ngns-guard meter beside Portkey's AI gateway %s, on the stand-in provider; %s %s/%s, %d CPUs, node %s\n",
		gateway.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), nodeVersion())
	fmt.Fprintf(w, "%d rounds interleaved; per path and round: %d sequential calls, %d streams, %d clients for %s\n\n",
		p.rounds, p.calls, p.streams, p.clients, p.load)
	direct := paths[0]
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "path\tp50 ms\tp99 ms\tadded p50 ms\tstream first byte p50 ms\tcalls/s, %d clients (rounds)\tpeak RSS MiB\t\n", p.clients)
	for _, x := range paths {
		added, rss := "-", "-"
		if x != direct {
			added = fmt.Sprintf("%.3f", ms(pct(x.seq, 50)-pct(direct.seq, 50)))
			rss = fmt.Sprintf("%.1f", float64(x.peakRSS)/(1<<20))
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%s\t%.3f\t%.0f (%.0f-%.0f)\t%s\t\n", x.name, ms(pct(x.seq, 50)), ms(pct(x.seq, 99)), added, ms(pct(x.firstByte, 50)),
			mean(x.rates), slices.Min(x.rates), slices.Max(x.rates), rss)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	pk, m := paths[1], paths[2]
	ratio := func(a, b float64) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2fx", a/b)
	}
	fmt.Fprintf(w, "\nmeter / Portkey: p50 %s, p99 %s, added p50 %s, stream first byte p50 %s, calls/s %s, peak RSS %s\n",
		ratio(ms(pct(m.seq, 50)), ms(pct(pk.seq, 50))), ratio(ms(pct(m.seq, 99)), ms(pct(pk.seq, 99))),
		ratio(ms(pct(m.seq, 50)-pct(direct.seq, 50)), ms(pct(pk.seq, 50)-pct(direct.seq, 50))),
		ratio(ms(pct(m.firstByte, 50)), ms(pct(pk.firstByte, 50))), ratio(mean(m.rates), mean(pk.rates)),
		ratio(float64(m.peakRSS), float64(pk.peakRSS)))
	fmt.Fprintln(w, "peak RSS is VmHWM: Portkey's node process; for the meter, this Go process's, which also holds the stand-in and the client.")
	return nil
}

func nodeVersion() string {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}
