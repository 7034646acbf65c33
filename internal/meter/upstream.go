package meter

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gns-guard/gns-guard/internal/metering"
)

// forward makes the call through httputil.ReverseProxy (hop-by-hop
// headers dropped, streams passed event by event), then settles and logs
// it once the answer is out. The call outlives a hung-up client by up to
// HangupRead, so the meter reads and charges what the provider bills
// (docs/meter.md#after-a-call).
func (m *Meter) forward(w http.ResponseWriter, r *http.Request, x *exchange) {
	ctx, release := m.detach(r.Context(), x)
	defer func() {
		release()
		gone := r.Context().Err() != nil
		m.settle(x)
		go m.finish(x, gone)
	}()
	rp := &httputil.ReverseProxy{
		Transport:      m.o.Transport,
		BufferPool:     buffers,
		ErrorLog:       quiet,
		Rewrite:        func(pr *httputil.ProxyRequest) { m.rewrite(ctx, pr, x) },
		ModifyResponse: func(resp *http.Response) error { return m.answer(resp, x) },
		ErrorHandler:   func(w http.ResponseWriter, _ *http.Request, err error) { m.upstreamFailed(w, x, err) },
	}
	rp.ServeHTTP(w, r)
}

// detach is the upstream call's context: it ends HangupRead after the
// client leaves.
func (m *Meter) detach(client context.Context, x *exchange) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(client))
	var mu sync.Mutex
	var timer *time.Timer
	released := false
	stop := context.AfterFunc(client, func() {
		mu.Lock()
		defer mu.Unlock()
		if !released {
			timer = time.AfterFunc(m.o.HangupRead, func() {
				x.timedOut.Store(true)
				cancel()
			})
		}
	})
	return ctx, func() {
		stop()
		mu.Lock()
		released = true
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		cancel()
	}
}

// rewrite makes the client's request the provider's: its address and key,
// the body as read, and the client's query and headers less the agent's
// key, the meter's headers and protocol switches.
func (m *Meter) rewrite(ctx context.Context, pr *httputil.ProxyRequest, x *exchange) {
	out := pr.Out.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				x.sent.Store(true)
			}
		},
	}))
	base := m.upstream[x.route.Provider]
	out.URL = &url.URL{Scheme: base.Scheme, User: base.User, Host: base.Host,
		Path: base.Path + "/v1/" + string(x.route.Endpoint), RawQuery: pr.Out.URL.RawQuery}
	out.Host = ""
	// The transport asks for gzip itself and unpacks the answer for its
	// usage; the meter switches no protocol.
	for _, h := range []string{"Authorization", "X-Api-Key", "Accept-Encoding", "Connection", "Upgrade", metering.InvocationHeader, AgentHeader} {
		out.Header.Del(h)
	}
	if key := m.o.Keys[x.route.Provider]; key != "" {
		if x.route.Provider == metering.Anthropic {
			out.Header.Set("X-Api-Key", key)
		} else {
			out.Header.Set("Authorization", "Bearer "+key)
		}
	}
	body := x.call.Body
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.ContentLength = int64(len(body))
	out.Header.Del("Content-Length")
	pr.Out = out
	x.forwarded = m.o.Now()
}

// errSwitch is a 101 answer: the meter tunnels nothing.
var errSwitch = errors.New("the provider switched protocols, which the meter does not pass on")

// answer notes the status and request id, adds the budget headers, and
// wraps the body to read the usage.
func (m *Meter) answer(resp *http.Response, x *exchange) error {
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return errSwitch
	}
	x.firstByte = m.o.Now()
	x.status = resp.StatusCode
	x.reqID = firstHeader(resp.Header, "X-Request-Id", "Request-Id")
	m.budgetHeaders(resp.Header, x)
	b := &answerBody{src: resp.Body, x: x, settle: m.settle}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The meter may drop events: the length no longer holds.
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		b.stream = metering.NewStream(x.route, x.call)
	}
	resp.Body = b
	return nil
}

// upstreamFailed answers 502 for a call the provider did not answer; an
// unwritten request spent nothing.
func (m *Meter) upstreamFailed(w http.ResponseWriter, x *exchange, err error) {
	x.unsent = !x.sent.Load()
	m.refuse(w, x, &metering.Refusal{Status: 502, Kind: metering.KindUnavailable, Rule: "meter-upstream",
		Message: "the provider could not be reached: " + err.Error()})
}

// answerBody passes an answer on (a stream event by event, less what the
// meter's usage request added) and reads its usage at the end. Close
// reads what a hung-up client left, to charge what the provider charged.
type answerBody struct {
	src    io.ReadCloser
	x      *exchange
	settle func(*exchange)  // queues the settlement as the answer ends
	stream *metering.Stream // nil: a JSON answer
	in     []byte           // a stream's bytes not yet a whole event
	out    []byte           // bytes for the client
	spare  []byte           // room for a stream's out
	kept   []byte           // a JSON answer, up to maxAnswerBytes
	over   bool             // the JSON answer was longer
	err    error            // how the provider's answer ended: io.EOF, or a cut
}

func (b *answerBody) Read(p []byte) (int, error) {
	for len(b.out) == 0 && b.err == nil {
		b.fill()
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	if len(b.out) == 0 && b.err != nil {
		return n, b.err
	}
	return n, nil
}

// fill reads once from the provider.
func (b *answerBody) fill() {
	if b.in == nil {
		b.in = buffers.Get()[:0]
	}
	if cap(b.in)-len(b.in) < 4<<10 {
		b.in = append(make([]byte, 0, 2*cap(b.in)), b.in...)
	}
	n, err := b.src.Read(b.in[len(b.in):cap(b.in)])
	chunk := b.in[len(b.in) : len(b.in)+n]
	if b.stream == nil {
		if len(b.kept)+n <= maxAnswerBytes {
			b.kept = append(b.kept, chunk...)
		} else {
			b.over = true
		}
		b.out = chunk
	} else {
		events, rest := metering.SplitEvents(b.in[:len(b.in)+n])
		out := b.spare[:0]
		for _, ev := range events {
			if o := b.stream.Event(ev); o != nil {
				out = append(out, o...)
			}
		}
		b.spare, b.out = out, out
		b.in = append(b.in[:0], rest...)
	}
	if err != nil {
		b.end(err)
	}
}

// end reads the usage when the answer ends, before its last bytes go out.
func (b *answerBody) end(err error) {
	b.err = err
	x := b.x
	var id string
	switch {
	case b.stream != nil:
		// What follows the last whole event passes as it came.
		b.out = append(b.out, b.in...)
		b.in = b.in[:0]
		x.usage, id = b.stream.Usage()
	case b.over:
		x.outcome = "answer-too-large"
	case errors.Is(err, io.EOF):
		x.usage, id = metering.ReadUsage(x.route.Provider, b.kept)
	}
	switch {
	case errors.Is(err, io.EOF):
	case b.stream != nil:
		x.outcome = "stream-cut"
	default:
		x.outcome = "answer-cut"
	}
	if x.reqID == "" {
		x.reqID = id
	}
	b.settle(x)
}

// Close reads what a hung-up client left, then closes.
func (b *answerBody) Close() error {
	for b.err == nil {
		b.fill()
		b.out = b.out[:0]
	}
	if cap(b.in) == 32<<10 {
		buffers.Put(b.in[:cap(b.in)])
	}
	b.in, b.out, b.spare = nil, nil, nil
	return b.src.Close()
}

// buffers lend ReverseProxy its copy buffers.
var buffers = &bufferPool{}

type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() []byte {
	if v, ok := b.p.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, 32<<10)
}

func (b *bufferPool) Put(buf []byte) { b.p.Put(&buf) }

// quiet drops ReverseProxy's log; the meter logs its own.
var quiet = log.New(io.Discard, "", 0)
