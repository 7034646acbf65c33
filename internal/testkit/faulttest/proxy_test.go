package faulttest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// fault is what the proxy does to a request it is told to break.
type fault string

const (
	// fault503 answers 503 without passing the request on: nothing is
	// written.
	fault503 fault = "503"
	// faultDrop closes the connection without passing the request on.
	faultDrop fault = "drop"
	// faultDropAfter passes the request on, then closes the connection
	// instead of answering: the write is made but the guard cannot know.
	faultDropAfter fault = "drop-after"
	// faultTimeout passes the request on, then holds the answer until the
	// client gives up waiting.
	faultTimeout fault = "timeout"
	// faultBlock holds the request without passing it on, until the
	// client goes away, and reports it on the rule's Blocked channel.
	faultBlock fault = "block"
	// faultGate holds the request until the rule's gate opens, then passes
	// it on.
	faultGate fault = "gate"
)

// writeKind is a kind of write request the guard makes.
type writeKind struct {
	name  string
	match *regexp.Regexp // METHOD and URL path
}

var (
	postComment   = writeKind{"POST comment", regexp.MustCompile(`^POST /api/v1/repos/[^/]+/[^/]+/issues/\d+/comments$`)}
	patchBody     = writeKind{"PATCH body", regexp.MustCompile(`^PATCH /api/v1/repos/[^/]+/[^/]+/issues/\d+$`)}
	patchComment  = writeKind{"PATCH comment", regexp.MustCompile(`^PATCH /api/v1/repos/[^/]+/[^/]+/issues/comments/\d+$`)}
	deleteComment = writeKind{"DELETE comment", regexp.MustCompile(`^DELETE /api/v1/repos/[^/]+/[^/]+/issues/comments/\d+$`)}
	labels        = writeKind{"labels", regexp.MustCompile(`^(POST /api/v1/repos/[^/]+/[^/]+/labels|POST /api/v1/repos/[^/]+/[^/]+/issues/\d+/labels|DELETE /api/v1/repos/[^/]+/[^/]+/issues/\d+/labels/\d+)$`)}
)

// rule breaks every request of one kind while it is on.
type rule struct {
	kind    writeKind
	fault   fault
	on      bool
	hits    int
	Blocked chan string   // faultBlock: the request held, once
	gate    chan struct{} // faultGate: closed to let requests through
	once    sync.Once
}

// open lets the requests a faultGate rule holds through, and all later ones.
func (r *rule) open() { r.once.Do(func() { close(r.gate) }) }

// proxy is an HTTP proxy on 127.0.0.1 in front of the real server that
// breaks the requests its rules match and passes the others on.
type proxy struct {
	URL string
	rp  *httputil.ReverseProxy

	mu    sync.Mutex
	rules []*rule
	log   []string // "METHOD path -> status" or "METHOD path -> fault"
}

func newProxy(t testing.TB, target string) *proxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{rp: &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) }}}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// inject turns a rule on: every request of kind gets fault until off is
// called.
func (p *proxy) inject(kind writeKind, f fault) *rule {
	r := &rule{kind: kind, fault: f, on: true, Blocked: make(chan string, 1), gate: make(chan struct{})}
	p.mu.Lock()
	p.rules = append(p.rules, r)
	p.mu.Unlock()
	return r
}

// off turns every rule off.
func (p *proxy) off() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.rules {
		r.on = false
	}
}

// Hits is how many requests the rule broke.
func (p *proxy) Hits(r *rule) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return r.hits
}

// Log returns the requests seen so far.
func (p *proxy) Log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

func (p *proxy) note(format string, args ...any) {
	p.mu.Lock()
	p.log = append(p.log, fmt.Sprintf(format, args...))
	p.mu.Unlock()
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := r.Method + " " + r.URL.Path
	var hit *rule
	p.mu.Lock()
	for _, ru := range p.rules {
		if ru.on && ru.kind.match.MatchString(req) {
			hit = ru
			ru.hits++
			break
		}
	}
	p.mu.Unlock()
	if hit == nil {
		rec := &statusWriter{ResponseWriter: w}
		p.rp.ServeHTTP(rec, r)
		p.note("%s -> %d", req, rec.status)
		return
	}
	p.note("%s -> %s", req, hit.fault)
	switch hit.fault {
	case fault503:
		http.Error(w, "service unavailable (injected by the test proxy)", http.StatusServiceUnavailable)
	case faultDrop:
		hangUp(w)
	case faultDropAfter:
		rec := httptest.NewRecorder()
		p.rp.ServeHTTP(rec, r)
		p.note("%s -> %d, not delivered", req, rec.Code)
		hangUp(w)
	case faultTimeout:
		rec := httptest.NewRecorder()
		p.rp.ServeHTTP(rec, r)
		p.note("%s -> %d, held", req, rec.Code)
		<-r.Context().Done()
	case faultBlock:
		// Reading the request to its end lets the server notice when the
		// client goes away.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case hit.Blocked <- req:
		default:
		}
		<-r.Context().Done()
	case faultGate:
		select {
		case <-hit.gate:
		case <-r.Context().Done():
			return
		}
		rec := &statusWriter{ResponseWriter: w}
		p.rp.ServeHTTP(rec, r)
		p.note("%s -> %d, after the gate", req, rec.status)
	}
}

// hangUp closes the connection without an answer.
func hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err) // an HTTP/1.1 test server always lets go of its connection
	}
	conn.Close()
}

// statusWriter records the status of an answer passed on.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// seen reports whether the log has a line starting with prefix and ending
// with suffix.
func seen(log []string, prefix, suffix string) bool {
	for _, l := range log {
		if strings.HasPrefix(l, prefix) && strings.HasSuffix(l, suffix) {
			return true
		}
	}
	return false
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
