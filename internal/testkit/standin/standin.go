// Package standin is a stand-in model provider for the meter's tests and
// benchmarks: it answers OpenAI's chat/completions, responses and
// embeddings and Anthropic's messages, JSON and server-sent-event streams,
// in the shapes the providers' API references document (each fixture below
// names its page), with usage figures the test chooses, or (Count) the
// input counted as a provider counts it. It reads a body as an upstream
// that matches keys exactly and keeps the first of a key given twice. It
// checks the provider key the meter must send and records what it
// received and what it charged.
package standin

import (
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"
)

// The keys the meter must hold for each provider.
const (
	OpenAIKey    = "sk-standin-openai"
	AnthropicKey = "sk-standin-anthropic"
)

// Provider is the stand-in.
type Provider struct {
	*httptest.Server
	// Input is the input tokens each answer reports; Output the output
	// tokens (at most the request's cap); Cached the cached input.
	Input, Output, Cached atomic.Int64
	// FailStatus, when set, answers every call with this status and the
	// provider's error body.
	FailStatus atomic.Int32
	// CutAfter, when set, ends a stream after that many events, without
	// its end.
	CutAfter atomic.Int32
	// Delay waits before each stream event (first-byte measurements).
	Delay atomic.Int64
	// NoUsage leaves usage out of answers.
	NoUsage atomic.Bool
	// Unrecorded keeps no record of requests (benchmarks).
	Unrecorded atomic.Bool
	// Count charges the input a provider would count (counted) in place
	// of Input: the text, token ids, tool definitions.
	Count atomic.Bool
	// AnswerDelay waits before answering at all (a model still thinking).
	AnswerDelay atomic.Int64
	// Header is added to every answer's headers.
	Header http.Header

	mu       sync.Mutex
	requests []Request
	n        atomic.Int64
}

// Request is what the stand-in received, and what it charged for it: the
// input and output tokens its answer's usage reports, billed as soon as
// the answer starts (a provider bills what it generates, whether or not
// the client reads it), 0 for a request it refused.
type Request struct {
	Path    string
	Header  http.Header
	Body    map[string]any
	ID      string
	Charged int64
}

// Start starts a stand-in provider, closed when the test ends.
func Start(t interface{ Cleanup(func()) }) *Provider {
	p := &Provider{}
	p.Input.Store(12)
	p.Output.Store(20)
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

// Requests are the requests received so far.
func (p *Provider) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.requests...)
}

// Charged is what the stand-in charged in all.
func (p *Provider) Charged() int64 {
	var n int64
	for _, r := range p.Requests() {
		n += r.Charged
	}
	return n
}

func (p *Provider) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	decoded, err := decodeFirst(raw)
	body, _ := decoded.(map[string]any)
	anthropic := r.URL.Path == "/v1/messages"
	n := p.n.Add(1)
	rec := Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, ID: fmt.Sprintf("req_standin_%d", n)}
	for k, vs := range p.Header {
		w.Header()[k] = vs
	}
	if anthropic {
		w.Header().Set("Request-Id", rec.ID)
	} else {
		w.Header().Set("X-Request-Id", rec.ID)
	}
	a := answer{p: p, n: n, path: r.URL.Path, body: body, in: p.Input.Load()}
	status, why := 0, ""
	switch {
	case !p.keyOK(r, anthropic):
		status, why = 401, "invalid x-api-key"
	case p.FailStatus.Load() != 0:
		status, why = int(p.FailStatus.Load()), "the stand-in was told to fail"
	case err != nil || body == nil:
		status, why = 400, "could not parse the JSON body"
	default:
		if p.Count.Load() {
			a.in = counted(r.URL.Path, body)
		}
		rec.Charged = a.in + a.output()*a.choices()
	}
	p.record(rec)
	if status != 0 {
		p.fail(w, anthropic, status, why)
		return
	}
	time.Sleep(time.Duration(p.AnswerDelay.Load()))
	stream, _ := body["stream"].(bool)
	switch r.URL.Path {
	case "/v1/chat/completions":
		if stream {
			p.events(w, a.chatStream())
			return
		}
		writeJSON(w, a.chat())
	case "/v1/responses":
		if stream {
			p.events(w, a.responseStream())
			return
		}
		writeJSON(w, a.response())
	case "/v1/embeddings":
		writeJSON(w, a.embeddings())
	case "/v1/messages":
		if stream {
			p.events(w, a.messageStream())
			return
		}
		writeJSON(w, a.message())
	default:
		p.fail(w, anthropic, 404, "no such route "+r.URL.Path)
	}
}

func (p *Provider) record(r Request) {
	if p.Unrecorded.Load() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests = append(p.requests, r)
}

// keyOK checks the provider's key arrived, and nothing else did.
func (p *Provider) keyOK(r *http.Request, anthropic bool) bool {
	if anthropic {
		return r.Header.Get("X-Api-Key") == AnthropicKey && r.Header.Get("Authorization") == ""
	}
	return r.Header.Get("Authorization") == "Bearer "+OpenAIKey && r.Header.Get("X-Api-Key") == ""
}

// fail answers in the provider's error shape: OpenAI's
// {"error":{"message","type","param","code"}}
// (platform.openai.com/docs/guides/error-codes) or Anthropic's
// {"type":"error","error":{"type","message"}} (docs.anthropic.com/en/api/errors).
func (p *Provider) fail(w http.ResponseWriter, anthropic bool, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if anthropic {
		fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":%q}}`, msg)
		return
	}
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","param":null,"code":"standin_%d"}}`, msg, status)
}

// events writes a server-sent-event stream, each event flushed alone.
func (p *Provider) events(w http.ResponseWriter, events iter.Seq[string]) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	fl := w.(http.Flusher)
	cut := int(p.CutAfter.Load())
	i := 0
	for ev := range events {
		if cut > 0 && i == cut {
			// A stream cut in the middle: the connection ends without the
			// rest, as a provider that dies does.
			panic(http.ErrAbortHandler)
		}
		if d := time.Duration(p.Delay.Load()); d > 0 {
			time.Sleep(d)
		}
		_, _ = io.WriteString(w, ev)
		fl.Flush()
		i++
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	data, _ := json.Marshal(v)
	_, _ = w.Write(data)
}
