package meter

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gns-guard/gns-guard/internal/metering"
)

// MaxLabelSets bounds each metric's label sets; past it, new ones count
// under all-"other" labels (docs/meter.md#metrics).
const MaxLabelSets = 10000

// otherLabel labels the calls past MaxLabelSets.
const otherLabel = "other"

// The histograms' upper bounds: seconds, and tokens (OpenTelemetry's for
// gen_ai.client.token.usage).
var (
	upstreamBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}
	addedBuckets    = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304}
)

// bound keeps a metric's label sets under its limit.
type bound struct {
	mu    sync.Mutex
	seen  map[string]struct{}
	limit int
}

// values are vals, or all "other" once the metric is full and vals new.
func (b *bound) values(vals ...string) []string {
	key := strings.Join(vals, "\xff")
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen[key]; ok {
		return vals
	}
	if len(b.seen) >= b.limit-1 {
		for i := range vals {
			vals[i] = otherLabel
		}
		return vals
	}
	b.seen[key] = struct{}{}
	return vals
}

func newBound() *bound { return &bound{seen: map[string]struct{}{}, limit: MaxLabelSets} }

// counterVec is a counter with its bound.
type counterVec struct {
	*prometheus.CounterVec
	b *bound
}

func (c counterVec) add(v float64, labels ...string) {
	c.WithLabelValues(c.b.values(labels...)...).Add(v)
}

// histogramVec is a histogram with its bound.
type histogramVec struct {
	*prometheus.HistogramVec
	b *bound
}

func (h histogramVec) observe(v float64, labels ...string) {
	h.WithLabelValues(h.b.values(labels...)...).Observe(v)
}

// metrics are served on GET /metrics to its token's holder. Names follow
// Prometheus's conventions, and OpenTelemetry's GenAI ones where those
// name the measure.
type metrics struct {
	// token is the token's hash, compared in constant time.
	token [sha256.Size]byte
	// issue labels the spend metrics by issue.
	issue bool
	reg   *prometheus.Registry

	calls, refusals, tokens, cost counterVec
	usage, duration, firstByte    histogramVec
	added                         prometheus.Histogram
	inFlight                      prometheus.Gauge
}

// newMetrics registers the meter's metrics; withIssue labels spend by issue.
func newMetrics(token string, withIssue bool) *metrics {
	spend := []string{"repo", "agent", "model", "provider"}
	if withIssue {
		spend = append(spend, "issue")
	}
	ms := &metrics{token: sha256.Sum256([]byte(token)), issue: withIssue, reg: prometheus.NewRegistry()}
	counter := func(name, help string, labels ...string) counterVec {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		ms.reg.MustRegister(v)
		return counterVec{v, newBound()}
	}
	histogram := func(name, help string, buckets []float64, labels ...string) histogramVec {
		v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
		ms.reg.MustRegister(v)
		return histogramVec{v, newBound()}
	}
	ms.calls = counter("gns_guard_meter_calls_total", "Calls the meter answered, by how they ended.",
		append(append([]string{}, spend...), "endpoint", "outcome")...)
	ms.refusals = counter("gns_guard_meter_refusals_total",
		"Calls the meter refused before sending them upstream, by the rule that refused them.", "rule")
	ms.tokens = counter("gns_guard_meter_tokens_total",
		"Tokens of the calls' usage as the provider reported it, by class (input counts cached, output counts reasoning).",
		append(append([]string{}, spend...), "class")...)
	ms.cost = counter("gns_guard_meter_cost_usd_total", "What the settled calls cost by the price table, in US dollars.", spend...)
	ms.usage = histogram("gen_ai_client_token_usage", "Tokens a call used, by type (OpenTelemetry gen_ai.client.token.usage).", tokenBuckets,
		"gen_ai_provider_name", "gen_ai_request_model", "gen_ai_operation_name", "gen_ai_token_type")
	ms.duration = histogram("gen_ai_client_operation_duration_seconds",
		"Time from sending a call upstream to the end of its answer (OpenTelemetry gen_ai.client.operation.duration).", upstreamBuckets,
		"gen_ai_provider_name", "gen_ai_request_model", "gen_ai_operation_name")
	ms.firstByte = histogram("gns_guard_meter_upstream_first_byte_seconds",
		"Time from sending a call upstream to the provider's first answer (its headers).", upstreamBuckets, "provider", "endpoint")
	ms.added = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "gns_guard_meter_added_seconds",
		Help: "The meter's own time before a call goes upstream: admission.", Buckets: addedBuckets})
	ms.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{Name: "gns_guard_meter_reservations_in_flight",
		Help: "Calls reserved at their worst case and not settled yet."})
	ms.reg.MustRegister(ms.added, ms.inFlight)
	return ms
}

// record counts call x, ended as outcome (its log line's). A call refused
// before its key was known counts under empty labels: no stranger names
// label sets.
func (ms *metrics) record(x *exchange, outcome string) {
	label, rule := metricOutcome(x, outcome)
	provider, endpoint := string(x.route.Provider), string(x.route.Endpoint)
	spend := []string{x.repo.name, x.agent, x.call.Model, provider}
	if ms.issue {
		issue := ""
		if x.repo.name != "" {
			issue = strconv.FormatInt(x.route.Issue, 10)
		}
		spend = append(spend, issue)
	}
	with := func(more ...string) []string { return append(append([]string{}, spend...), more...) }
	ms.calls.add(1, with(endpoint, label)...)
	if rule != "" {
		ms.refusals.add(1, rule)
	}
	if x.usage.Known {
		for class, n := range map[string]int64{"input": x.usage.Input, "cached": x.usage.Cached, "output": x.usage.Output, "reasoning": x.usage.Reasoning} {
			ms.tokens.add(float64(n), with(class)...)
		}
		op := operation(x.route.Endpoint)
		ms.usage.observe(float64(x.usage.Input), provider, x.call.Model, op, "input")
		ms.usage.observe(float64(x.usage.Output), provider, x.call.Model, op, "output")
	}
	if x.id != 0 {
		ms.cost.add(float64(x.cost)/1e6, spend...)
	}
	if !x.forwarded.IsZero() {
		ms.added.Observe(x.forwarded.Sub(x.started).Seconds())
		ms.duration.observe(x.upstreamTook.Seconds(), provider, x.call.Model, operation(x.route.Endpoint))
		if !x.firstByte.IsZero() {
			ms.firstByte.observe(x.firstByte.Sub(x.forwarded).Seconds(), provider, endpoint)
		}
	}
}

// operation is an endpoint's gen_ai.operation.name.
func operation(e metering.Endpoint) string {
	if e == metering.Embeddings {
		return "embeddings"
	}
	return "chat"
}

// metricOutcome is a call's outcome label and a refusal's rule, the first
// that holds: refused (before upstream), worst_case (charged it, or the
// settlement failed), client_gone, upstream_error (unreachable, an error
// status or a cut answer), ok.
func metricOutcome(x *exchange, outcome string) (label, rule string) {
	rule, refused := strings.CutPrefix(outcome, "refused:")
	rule, _, _ = strings.Cut(rule, ":")
	upstream := refused && rule == "meter-upstream"
	switch {
	case refused && !upstream:
		return "refused", rule
	case strings.Contains(outcome, "charged-worst-case"), strings.HasPrefix(outcome, "settle-failed"):
		return "worst_case", ""
	case strings.HasPrefix(outcome, "client-gone"):
		return "client_gone", ""
	case upstream, x.status >= 400, outcome != "" && outcome != "ok":
		return "upstream_error", ""
	}
	return "ok", ""
}

// metricsHandler serves GET /metrics: 404 with no metrics token set, 401
// to a request without it.
func (m *Meter) metricsHandler() http.Handler {
	if m.metrics == nil {
		return http.NotFoundHandler()
	}
	serve := promhttp.HandlerFor(m.metrics.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		got := sha256.Sum256([]byte(token))
		if subtle.ConstantTimeCompare(got[:], m.metrics.token[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="gns-guard meter metrics"`)
			http.Error(w, "GET /metrics takes the metrics token: Authorization: Bearer TOKEN", http.StatusUnauthorized)
			return
		}
		serve.ServeHTTP(w, r)
	})
}
