package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// Call is one chat call of a short prompt, as an agent makes it: the body
// of internal/meter's BenchmarkCall. Stream is the same call streamed.
const Call = `{"model":"gpt-4o","max_tokens":20,"messages":[{"role":"system","content":"You are the lead developer."},{"role":"user","content":"Wire the limiter into the gateway config and say what changed."}]}`

// Stream is Call, streamed.
var Stream = strings.Replace(Call, `"max_tokens":20`, `"max_tokens":20,"stream":true`, 1)

// LongCall is a call as an agent deep in its work makes it: a system
// prompt, then a conversation of 40 turns, about 20,000 tokens in all
// (82 KB). fresh is put before the last turn's text: a new text each
// call makes it a conversation going on.
func LongCall(fresh string) string {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	msgs := []message{{"system", "You are the lead developer. " + strings.Repeat("Keep every change small and say what you changed. ", 20)}}
	for i := range 40 {
		msgs = append(msgs, message{[]string{"user", "assistant"}[i%2],
			fmt.Sprintf("Turn %d: ", i) + strings.Repeat("The limiter keeps the gateway's callers under their quota; see config/gateway.yaml line 42. ", 22)})
	}
	msgs[len(msgs)-1].Content = fresh + msgs[len(msgs)-1].Content
	body, _ := json.Marshal(map[string]any{"model": "gpt-4o", "max_tokens": 20, "messages": msgs})
	return string(body)
}

// Plan is what a round does on each path.
type Plan struct {
	Calls   int           // sequential non-stream calls (p50, p99)
	Long    int           // sequential calls of LongCall, its last turn new each call (p50)
	Streams int           // sequential streams (p50 time to the first event)
	Clients int           // concurrent clients of the load (calls a second)
	Load    time.Duration // how long they call
}

// DefaultPlan is the side-by-side benchmark's round.
var DefaultPlan = Plan{Calls: 2000, Long: 300, Streams: 500, Clients: 16, Load: 10 * time.Second}

// Path is one way to the provider, and what was measured on it.
type Path struct {
	Name   string
	URL    string // the chat completions endpoint
	Header http.Header
	PID    int // the process whose peak RSS is reported; 0: none

	seq, long, firstByte []time.Duration
	rates                []float64
	peakRSS              int64 // bytes
}

// Bench measures paths side by side, in rounds: each round runs each
// measure on every path, the paths' order turning a step a round. The
// first path is the direct one, the second the gateway the others are
// compared with; the paths from the third on each do more than the one
// before (a relay, a bare proxy, the meter), and what a path adds beyond
// the one before it is its own work.
type Bench struct {
	Plan
	Paths    []*Path
	Client   *http.Client
	Progress io.Writer // a line per path and round
	rounds   int
}

// WarmUp checks every path answers a call and a stream in full, then
// makes a few hundred calls on each, not counted.
func (b *Bench) WarmUp(ctx context.Context) error {
	for _, x := range b.Paths {
		body, err := b.post(ctx, x, Call)
		if err != nil || !strings.Contains(body, `"chat.completion"`) {
			return fmt.Errorf("%s: a call: %v %.300s", x.Name, err, body)
		}
		body, err = b.post(ctx, x, Stream)
		if err != nil || !strings.Contains(body, "data: [DONE]") {
			return fmt.Errorf("%s: a stream: %v %.300s", x.Name, err, body)
		}
		for range 200 {
			if _, err := b.post(ctx, x, Call); err != nil {
				return fmt.Errorf("%s: %w", x.Name, err)
			}
		}
	}
	return nil
}

// Round runs one round.
func (b *Bench) Round(ctx context.Context) error {
	r := b.rounds % len(b.Paths)
	order := append(slices.Clone(b.Paths[r:]), b.Paths[:r]...)
	b.rounds++
	err := timeEach(order, b.Calls, "a call", func(x *Path) *[]time.Duration { return &x.seq }, func(x *Path) (time.Duration, error) {
		return b.timedPost(ctx, x, Call)
	})
	if err == nil {
		err = timeEach(order, b.Long, "a long call", func(x *Path) *[]time.Duration { return &x.long }, func(x *Path) (time.Duration, error) {
			return b.timedPost(ctx, x, LongCall(fmt.Sprintf("(%d) ", len(x.long))))
		})
	}
	if err == nil {
		err = timeEach(order, b.Streams, "a stream", func(x *Path) *[]time.Duration { return &x.firstByte }, func(x *Path) (time.Duration, error) {
			return b.firstByte(ctx, x)
		})
	}
	if err != nil {
		return err
	}
	for _, x := range order {
		settle()
		rate, err := b.load(ctx, x)
		if err != nil {
			return fmt.Errorf("%s: %d clients: %w", x.Name, b.Clients, err)
		}
		x.rates = append(x.rates, rate)
	}
	for _, x := range order {
		if b.Progress != nil {
			fmt.Fprintf(b.Progress, "round %d %-9s p50 %7.3f ms  p99 %7.3f ms  long p50 %7.3f ms  first byte p50 %7.3f ms  %7.0f calls/s\n",
				b.rounds, x.Name, ms(pct(x.seq[len(x.seq)-b.Calls:], 50)), ms(pct(x.seq[len(x.seq)-b.Calls:], 99)),
				ms(pct(x.long[len(x.long)-b.Long:], 50)), ms(pct(x.firstByte[len(x.firstByte)-b.Streams:], 50)), x.rates[len(x.rates)-1])
		}
	}
	return nil
}

// timeEach runs measure n times on each path in order, and adds each time
// to the path's list that in names.
func timeEach(order []*Path, n int, what string, in func(*Path) *[]time.Duration, measure func(*Path) (time.Duration, error)) error {
	for _, x := range order {
		for range n {
			d, err := measure(x)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", x.Name, what, err)
			}
			*in(x) = append(*in(x), d)
		}
	}
	return nil
}

// timedPost is the time a call takes, its answer read whole.
func (b *Bench) timedPost(ctx context.Context, x *Path, body string) (time.Duration, error) {
	start := time.Now()
	_, err := b.post(ctx, x, body)
	return time.Since(start), err
}

func (b *Bench) request(ctx context.Context, x *Path, body string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, x.URL, strings.NewReader(body))
	for k, v := range x.Header {
		req.Header[k] = v
	}
	return req
}

// post makes a call and reads its answer whole.
func (b *Bench) post(ctx context.Context, x *Path, body string) (string, error) {
	resp, err := b.Client.Do(b.request(ctx, x, body))
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
func (b *Bench) firstByte(ctx context.Context, x *Path) (time.Duration, error) {
	start := time.Now()
	resp, err := b.Client.Do(b.request(ctx, x, Stream))
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

// load has the clients call for the plan's time, each a call after the
// other, and returns the calls per second they made in all.
func (b *Bench) load(ctx context.Context, x *Path) (float64, error) {
	var (
		calls atomic.Int64
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	start := time.Now()
	deadline := start.Add(b.Load)
	for range b.Clients {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if _, err := b.post(ctx, x, Call); err != nil {
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

// ReadPeakRSS reads each path's process's peak RSS; call it before the
// processes end.
func (b *Bench) ReadPeakRSS() error {
	for _, x := range b.Paths {
		if x.PID == 0 {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", x.PID))
		if err != nil {
			return err
		}
		x.peakRSS = -1
		for line := range strings.Lines(string(data)) {
			if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				if err != nil {
					return fmt.Errorf("/proc/%d/status: %w", x.PID, err)
				}
				x.peakRSS = kb << 10
			}
		}
		if x.peakRSS < 0 {
			return fmt.Errorf("no VmHWM in /proc/%d/status", x.PID)
		}
	}
	return nil
}

// Figures are a path's results over every round.
type Figures struct {
	P50, P99, AddedP50, FirstByteP50 time.Duration
	LongP50, LongAddedP50            time.Duration
	CallsPerSecond                   float64 // the mean over the rounds
	PeakRSS                          int64   // bytes; 0: not measured
}

// Figures are the named path's results; AddedP50 is its p50 less the
// direct path's.
func (b *Bench) Figures(name string) Figures {
	direct := b.Paths[0]
	for _, x := range b.Paths {
		if x.Name == name {
			return Figures{P50: pct(x.seq, 50), P99: pct(x.seq, 99), AddedP50: pct(x.seq, 50) - pct(direct.seq, 50),
				LongP50: pct(x.long, 50), LongAddedP50: pct(x.long, 50) - pct(direct.long, 50),
				FirstByteP50: pct(x.firstByte, 50), CallsPerSecond: mean(x.rates), PeakRSS: x.peakRSS}
		}
	}
	return Figures{}
}

// Report prints the table: the latencies over every round's calls, the
// calls per second a mean over the rounds, with the lowest and highest
// round; then each path's ratios to the gateway, and what each path from
// the fourth adds beyond the one before it.
func (b *Bench) Report(w io.Writer) error {
	fmt.Fprintf(w, "\ngns-guard meter beside Portkey's AI gateway %s, on the stand-in provider; %s %s/%s, %d CPUs, node %s\n",
		Version, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), nodeVersion())
	fmt.Fprintf(w, "%d rounds interleaved; per path and round: %d sequential calls, %d long ones (82 KB), %d streams, %d clients for %s\n\n",
		b.rounds, b.Calls, b.Long, b.Streams, b.Clients, b.Load)
	direct := b.Paths[0]
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "path\tp50 ms\tp99 ms\tadded p50 ms\tlong call p50 ms\tlong added p50 ms\tstream first byte p50 ms\t"+
		"calls/s, %d clients (rounds)\tpeak RSS MiB\t\n", b.Clients)
	for _, x := range b.Paths {
		f := b.Figures(x.Name)
		added, longAdded, rss := "-", "-", "-"
		if x != direct {
			added = fmt.Sprintf("%.3f", ms(f.AddedP50))
			longAdded = fmt.Sprintf("%.3f", ms(f.LongAddedP50))
		}
		if f.PeakRSS > 0 {
			rss = fmt.Sprintf("%.1f", float64(f.PeakRSS)/(1<<20))
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%s\t%.3f\t%s\t%.3f\t%.0f (%.0f-%.0f)\t%s\t\n", x.Name, ms(f.P50), ms(f.P99), added,
			ms(f.LongP50), longAdded, ms(f.FirstByteP50), f.CallsPerSecond, slices.Min(x.rates), slices.Max(x.rates), rss)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(b.Paths) < 3 {
		return nil
	}
	gw := b.Figures(b.Paths[1].Name)
	ratio := func(a, b float64) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2fx", a/b)
	}
	for _, x := range b.Paths[2:] {
		f := b.Figures(x.Name)
		fmt.Fprintf(w, "\n%s / %s: p50 %s, p99 %s, added p50 %s, long added p50 %s, stream first byte p50 %s, calls/s %s, peak RSS %s\n",
			x.Name, b.Paths[1].Name, ratio(ms(f.P50), ms(gw.P50)), ratio(ms(f.P99), ms(gw.P99)), ratio(ms(f.AddedP50), ms(gw.AddedP50)),
			ratio(ms(f.LongAddedP50), ms(gw.LongAddedP50)), ratio(ms(f.FirstByteP50), ms(gw.FirstByteP50)),
			ratio(f.CallsPerSecond, gw.CallsPerSecond), ratio(float64(f.PeakRSS), float64(gw.PeakRSS)))
	}
	fmt.Fprintln(w, "stream first byte over direct:", firstByteOver(b))
	for i := 3; i < len(b.Paths); i++ {
		less, f := b.Figures(b.Paths[i-1].Name), b.Figures(b.Paths[i].Name)
		fmt.Fprintf(w, "%s less %s: p50 %.3f ms, long call p50 %.3f ms, stream first byte p50 %.3f ms\n", b.Paths[i].Name, b.Paths[i-1].Name,
			ms(f.P50-less.P50), ms(f.LongP50-less.LongP50), ms(f.FirstByteP50-less.FirstByteP50))
	}
	fmt.Fprintln(w, "peak RSS is VmHWM of each path's own process.")
	return nil
}

// firstByteOver is each path's stream first byte less the direct path's.
func firstByteOver(b *Bench) string {
	direct := b.Figures(b.Paths[0].Name).FirstByteP50
	var out []string
	for _, x := range b.Paths[1:] {
		out = append(out, fmt.Sprintf("%s %.3f ms", x.Name, ms(b.Figures(x.Name).FirstByteP50-direct)))
	}
	return strings.Join(out, ", ")
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
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func nodeVersion() string {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}
