package meter

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/testkit/gateway"
	"github.com/gns-guard/gns-guard/internal/testkit/standin"
)

// benchCall is one chat call of a short prompt, as an agent makes it.
const benchCall = `{"model":"gpt-4o","max_tokens":20,"messages":[{"role":"system","content":"You are the lead developer."},{"role":"user","content":"Wire the limiter into the gateway config and say what changed."}]}`

// benchRig is a rig whose issue standing and key's login are kept for
// the whole benchmark: every call through the meter is a cache hit. Its
// metrics are on, as a scraped meter's are: each call counts in them.
func benchRig(b testing.TB) (*rig, *http.Client) {
	r := newRig(b, withMetrics)
	// A budget no benchmark spends: every call is admitted.
	r.gitea.Change(7, func(is *issues.Issue) { is.Body = body(7, 1e12, 1e12-6200) })
	judge(b, r.gitea, 7)
	r.m.o.IssueTTL, r.m.issues.ttl, r.m.repos.ttl = time.Hour, time.Hour, time.Hour
	r.prov.Unrecorded.Store(true)
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	if err := postTo(c, r.base(7, "openai")+"/chat/completions", agentToken1, benchCall); err != nil {
		b.Fatal(err)
	}
	return r, c
}

// bareProxy serves gateway.BareProxy in front of the stand-in: a hop
// that reads and passes a call and does nothing else. What the meter adds
// beyond it is the meter's own work.
func bareProxy(b *testing.B, r *rig) string {
	u, err := url.Parse(r.prov.URL)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(gateway.BareProxy(u))
	b.Cleanup(srv.Close)
	return srv.URL
}

// BenchmarkCall is one chat call, straight to the stand-in, through a
// bare proxy and through the meter: the difference is the meter's added
// latency (p50, p99), of which the bare proxy's is the hop's own. With
// -cpu 1, through-meter's ns/op gives the calls a core serves.
func BenchmarkCall(b *testing.B) {
	r, c := benchRig(b)
	bare := bareProxy(b, r)
	b.Run("direct", func(b *testing.B) {
		timed(b, func() error { return postTo(c, r.prov.URL+"/v1/chat/completions", standin.OpenAIKey, benchCall) })
	})
	b.Run("through-bare-proxy", func(b *testing.B) {
		timed(b, func() error { return postTo(c, bare+"/v1/chat/completions", standin.OpenAIKey, benchCall) })
	})
	b.Run("through-meter", func(b *testing.B) {
		timed(b, func() error { return postTo(c, r.base(7, "openai")+"/chat/completions", agentToken1, benchCall) })
	})
}

// BenchmarkCallLongPrompt is BenchmarkCall with a long prompt
// (gateway.LongCall, about 20,000 tokens): straight
// to the stand-in, through the meter as an agent sends it (the
// conversation the meter has seen, its last turn new each call), and
// through the meter with every text new. The meter counts a call's input
// before it reserves; the stand-in counts it too, as a provider does.
func BenchmarkCallLongPrompt(b *testing.B) {
	r, c := benchRig(b)
	seen := gateway.LongCall("")
	b.Run("direct", func(b *testing.B) {
		timed(b, func() error { return postTo(c, r.prov.URL+"/v1/chat/completions", standin.OpenAIKey, seen) })
	})
	var n atomic.Int64
	// Each body is made before its call is timed.
	through := func(body func() string) func() (time.Duration, error) {
		return func() (time.Duration, error) {
			text := body()
			start := time.Now()
			err := postTo(c, r.base(7, "openai")+"/chat/completions", agentToken1, text)
			return time.Since(start), err
		}
	}
	b.Run("through-meter", func(b *testing.B) {
		timedBy(b, through(func() string { return gateway.LongCall(fmt.Sprintf("(%d) ", n.Add(1))) }))
	})
	b.Run("through-meter-all-new", func(b *testing.B) {
		timedBy(b, through(func() string { return strings.ReplaceAll(seen, "Turn ", fmt.Sprintf("Turn %d.", n.Add(1))) }))
	})
}

// BenchmarkCallParallel is 16 clients calling at once through the
// meter, as agents on several issues do: calls/s is the meter's
// throughput when the store's commits can share a transaction.
func BenchmarkCallParallel(b *testing.B) {
	r, c := benchRig(b)
	const clients = 16
	url := r.base(7, "openai") + "/chat/completions"
	var next atomic.Int64
	d := make([]time.Duration, b.N)
	var wg sync.WaitGroup
	b.ResetTimer()
	start, cpu := time.Now(), cpuTime()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(b.N); i = next.Add(1) - 1 {
				t := time.Now()
				if err := postTo(c, url, agentToken1, benchCall); err != nil {
					b.Error(err)
					return
				}
				d[i] = time.Since(t)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/call")
	slices.Sort(d)
	b.ReportMetric(float64(b.N)/took.Seconds(), "calls/s")
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(d[len(d)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkStreamFirstByte is the time to a stream's first event,
// straight, through a bare proxy and through the meter.
func BenchmarkStreamFirstByte(b *testing.B) {
	r, c := benchRig(b)
	bare := bareProxy(b, r)
	stream := strings.Replace(benchCall, `"max_tokens":20`, `"max_tokens":20,"stream":true`, 1)
	b.Run("direct", func(b *testing.B) {
		timedBy(b, func() (time.Duration, error) {
			return firstByte(c, r.prov.URL+"/v1/chat/completions", standin.OpenAIKey, stream)
		})
	})
	b.Run("through-bare-proxy", func(b *testing.B) {
		timedBy(b, func() (time.Duration, error) {
			return firstByte(c, bare+"/v1/chat/completions", standin.OpenAIKey, stream)
		})
	})
	b.Run("through-meter", func(b *testing.B) {
		timedBy(b, func() (time.Duration, error) {
			return firstByte(c, r.base(7, "openai")+"/chat/completions", agentToken1, stream)
		})
	})
}

// timed runs call b.N times and reports the p50 and p99 of one call.
func timed(b *testing.B, call func() error) {
	b.Helper()
	timedBy(b, func() (time.Duration, error) {
		start := time.Now()
		err := call()
		return time.Since(start), err
	})
}

// timedBy runs call b.N times and reports the p50 and p99 of the times
// it returns.
func timedBy(b *testing.B, call func() (time.Duration, error)) {
	b.Helper()
	d := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	cpu := cpuTime()
	for b.Loop() {
		took, err := call()
		if err != nil {
			b.Fatal(err)
		}
		d = append(d, took)
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(len(d)), "cpu-ns/call")
	slices.Sort(d)
	if len(d) > 0 {
		b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(d[len(d)*99/100].Nanoseconds()), "p99-ns")
	}
}

// cpuTime is the CPU the process has used: the meter's, the stand-in's
// and the clients'. On a shared machine it moves less than the clock.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

func postTo(c *http.Client, url, token, body string) error {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 200 {
		return &statusError{resp.StatusCode}
	}
	return err
}

type statusError struct{ code int }

func (e *statusError) Error() string { return http.StatusText(e.code) }

// firstByte posts a streamed call and returns the time to its first
// event's first line. It reads the rest untimed, as a client does: one
// that hangs up after the first line costs both hops a new connection.
func firstByte(c *http.Client, url, token, body string) (time.Duration, error) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	_, err = br.ReadString('\n')
	took := time.Since(start)
	if err == nil {
		_, err = io.Copy(io.Discard, br)
	}
	if err == nil && resp.StatusCode != http.StatusOK {
		err = &statusError{resp.StatusCode}
	}
	return took, err
}

// BenchmarkMetricsRecord is what counting one settled call in the
// metrics costs the call, at log time.
func BenchmarkMetricsRecord(b *testing.B) {
	ms := newMetrics("t", false)
	x := &exchange{route: metering.Route{Owner: "acme", Name: "app", Provider: metering.OpenAI, Endpoint: "chat/completions"},
		repo: repository{id: 1, name: "acme/app"}, agent: "coder", call: metering.Call{Model: "gpt-4o"}, status: 200, id: 1, cost: 125,
		usage: metering.Usage{Input: 40, Cached: 8, Output: 20, Known: true}, started: time.Now(), forwarded: time.Now(), upstreamTook: 80 * time.Millisecond}
	for b.Loop() {
		ms.record(x, "")
	}
}
