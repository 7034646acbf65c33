package meter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gns-guard/gns-guard/internal/meterclient"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/meterstore"
	"github.com/gns-guard/gns-guard/internal/receipt"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// Options configure a meter.
type Options struct {
	// Server is the Gitea server's URL.
	Server string
	// Upstream are the providers' base URLs before /v1; Keys their API keys.
	Upstream map[metering.Provider]string
	Keys     map[metering.Provider]string
	// Store keeps the calls; Key signs receipts.
	Store *meterstore.Store
	Key   receipt.Key
	// IssueTTL is how long an issue's standing is kept (DefaultIssueTTL);
	// LoginTTL a token's login and write access (DefaultLoginTTL, at most
	// MaxLoginTTL, within which lost access stops spending).
	IssueTTL, LoginTTL time.Duration
	// DefaultMaxTokens caps an answer the request leaves uncapped.
	DefaultMaxTokens int64
	// Log gets one line per call.
	Log io.Writer
	// Now reads the clock (time.Now).
	Now func() time.Time
	// Transport reaches the providers (ProviderTransport's).
	Transport http.RoundTripper
	// HangupRead is how long an answer is still read after the client
	// hangs up, to charge it (DefaultHangupRead).
	HangupRead time.Duration
	// Connect makes a Gitea client reading with an agent's token.
	Connect Connect
	// Scope are the owners (OWNER) and repositories (OWNER/NAME) served;
	// others are refused before Gitea or a provider is asked
	// (docs/meter.md#whom-it-serves). Empty serves the whole server.
	Scope []string
	// MetricsToken is GET /metrics' bearer token; empty, /metrics answers
	// 404 (docs/meter.md#metrics).
	MetricsToken string
	// MetricsIssue labels the spend metrics by issue: a label set an issue,
	// at the operator's choice.
	MetricsIssue bool
	// Gate, when set, also serves the gate (docs/gate.md).
	Gate *GateOptions
}

// Defaults and bounds of Options.
const (
	DefaultIssueTTL          = metering.DefaultIssueTTL
	DefaultLoginTTL          = MaxLoginTTL
	MaxLoginTTL              = time.Minute
	DefaultMaxTokens         = metering.DefaultMaxTokens
	DefaultHangupRead        = metering.DefaultHangupRead
	maxAnswerBytes           = 64 << 20
	defaultOpenAIUpstream    = "https://api.openai.com"
	defaultAnthropicUpstream = "https://api.anthropic.com"
)

// Meter is the proxy.
type Meter struct {
	o        Options
	upstream map[metering.Provider]*url.URL
	logins   *cache[login]
	repos    *cache[repository]
	issues   *cache[*standing]
	gates    *cache[gateConn]
	counters sync.Map // tokens.Encoding → *tokens.Counter
	memo     *countMemo
	logMu    sync.Mutex
	metrics  *metrics // nil: no MetricsToken
	answered *answered
}

// New makes a meter.
func New(o Options) (*Meter, error) {
	if o.Store == nil {
		return nil, errors.New("meter: no store")
	}
	if o.Connect == nil {
		return nil, errors.New("meter: no Connect: nothing reaches Gitea")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.IssueTTL <= 0 {
		o.IssueTTL = DefaultIssueTTL
	}
	if o.LoginTTL <= 0 {
		o.LoginTTL = DefaultLoginTTL
	}
	o.LoginTTL = min(o.LoginTTL, MaxLoginTTL)
	if o.DefaultMaxTokens <= 0 {
		o.DefaultMaxTokens = DefaultMaxTokens
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Transport == nil {
		o.Transport = ProviderTransport()
	}
	if o.HangupRead <= 0 {
		o.HangupRead = DefaultHangupRead
	}
	up, err := upstreams(o.Upstream)
	if err != nil {
		return nil, err
	}
	var ms *metrics
	if o.MetricsToken != "" {
		ms = newMetrics(o.MetricsToken, o.MetricsIssue)
	}
	return &Meter{
		o:       o,
		metrics: ms,
		// No overall timeout: a stream lasts while the model writes.
		upstream: up,
		logins:   newCache[login](o.LoginTTL, o.Now),
		gates:    newCache[gateConn](o.LoginTTL, o.Now),
		repos:    newCache[repository](o.IssueTTL, o.Now),
		issues:   newCache[*standing](o.IssueTTL, o.Now),
		answered: newAnswered(),
		memo:     newCountMemo(),
	}, nil
}

// upstreams are the default base URLs, overridden by given.
func upstreams(given map[metering.Provider]string) (map[metering.Provider]*url.URL, error) {
	raw := map[metering.Provider]string{metering.OpenAI: defaultOpenAIUpstream, metering.Anthropic: defaultAnthropicUpstream}
	for p, u := range given {
		if u != "" {
			raw[p] = strings.TrimRight(u, "/")
		}
	}
	out := map[metering.Provider]*url.URL{}
	for p, u := range raw {
		parsed, err := url.Parse(u)
		if err != nil || parsed.Host == "" || (parsed.Scheme != "http" && parsed.Scheme != "https") {
			return nil, fmt.Errorf("meter: the %s upstream %q is not an http(s) URL", p, u)
		}
		out[p] = parsed
	}
	return out, nil
}

// counter is the shared counter of an encoding.
func (m *Meter) counter(enc tokens.Encoding) *tokens.Counter {
	if c, ok := m.counters.Load(enc); ok {
		return c.(*tokens.Counter)
	}
	c, err := tokens.New(enc)
	if err != nil {
		return nil
	}
	actual, _ := m.counters.LoadOrStore(enc, c)
	return actual.(*tokens.Counter)
}

// Handler serves /healthz, /about, /metrics, the receipts, statements
// and invocations, and the providers' APIs under /OWNER/NAME/issues/N/.
func (m *Meter) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", m.healthz)
	mux.HandleFunc("GET /about", m.aboutHandler)
	mux.Handle("GET /metrics", m.metricsHandler())
	mux.HandleFunc("GET /{owner}/{name}/issues/{n}/invocations/{inv}/receipt", m.receipt)
	mux.HandleFunc("GET /{owner}/{name}/metered", m.metered)
	mux.HandleFunc("GET /{owner}/{name}/issues/{n}/metered", m.statement)
	mux.HandleFunc("GET /{owner}/{name}/issues/{n}/invocations/current", m.current)
	mux.HandleFunc("GET /{owner}/{name}/issues/{n}/invocations", m.tree)
	m.gateRoutes(mux)
	mux.HandleFunc("/", m.proxy)
	return mux
}

// Store is the meter's store, for the gate served beside it.
func (m *Meter) Store() *meterstore.Store { return m.o.Store }

func (m *Meter) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if err := m.o.Store.Ping(ctx); err != nil {
		http.Error(w, "the store does not answer", http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ok")
}

// ProviderTransport is Go's default transport with enough idle
// connections a host for agents calling at once. The default keeps 2:
// most concurrent calls would pay a TLS handshake.
func ProviderTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 1024
	t.MaxIdleConnsPerHost = 256
	t.IdleConnTimeout = 90 * time.Second
	return t
}

// Serve serves on l until ctx ends, then lets calls in flight finish, for
// at most drain.
func (m *Meter) Serve(ctx context.Context, l net.Listener, drain time.Duration) error {
	srv := &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 30 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drain)
	defer cancel()
	err := srv.Shutdown(sctx)
	m.answered.wait(sctx, func(*exchange) bool { return true }, true)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("meter: calls still in flight after %s were cut", drain)
	}
	return err
}

// cache keeps values for ttl; concurrent misses fill once.
type cache[V any] struct {
	ttl  time.Duration
	now  func() time.Time
	mu   sync.Mutex
	m    map[string]*entry[V]
	keys map[string]*sync.Mutex
}

type entry[V any] struct {
	v  V
	at time.Time
}

func newCache[V any](ttl time.Duration, now func() time.Time) *cache[V] {
	return &cache[V]{ttl: ttl, now: now, m: map[string]*entry[V]{}, keys: map[string]*sync.Mutex{}}
}

// get returns key's value, filling it when absent or stale.
func (c *cache[V]) get(key string, fill func() (V, error)) (V, error) {
	if v, ok := c.fresh(key); ok {
		return v, nil
	}
	c.mu.Lock()
	km := c.keys[key]
	if km == nil {
		km = &sync.Mutex{}
		c.keys[key] = km
	}
	c.mu.Unlock()
	km.Lock()
	defer km.Unlock()
	if v, ok := c.fresh(key); ok {
		return v, nil
	}
	v, err := fill()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	c.m[key] = &entry[V]{v: v, at: c.now()}
	c.mu.Unlock()
	return v, nil
}

func (c *cache[V]) fresh(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[key]
	if e == nil || c.now().Sub(e.at) > c.ttl {
		var zero V
		return zero, false
	}
	return e.v, true
}

// inScope says the meter serves repository owner/name.
func (m *Meter) inScope(owner, name string) bool { return m.about().Serves(owner, name) }

// about is what GET /about answers.
func (m *Meter) about() meterclient.About {
	a := meterclient.About{Server: m.o.Server, Scope: m.o.Scope, PublicKey: m.o.Key.Public()}
	a.Gate = m.o.Gate != nil
	return a
}

// aboutHandler answers GET /about for doctor, with no token: nothing in
// it is secret.
func (m *Meter) aboutHandler(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(m.about())
}

// outOfScope refuses a repository the meter does not serve.
func (m *Meter) outOfScope(owner, name string) *metering.Refusal {
	return &metering.Refusal{Status: 403, Kind: metering.KindPermission, Rule: "meter-scope",
		Message: fmt.Sprintf("this meter serves %s, not %s/%s: its provider keys are those teams' (start a meter with --scope for yours)",
			strings.Join(m.o.Scope, ", "), owner, name)}
}
