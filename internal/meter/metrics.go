package meter

import (
	"bufio"
	"cmp"
	"crypto/sha256"
	"crypto/subtle"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxLabelSets bounds the label sets of each metric of GET /metrics: past
// it, a new label set is counted under the one whose every value is
// "other" (docs/meter.md#metrics).
const MaxLabelSets = 10000

// otherLabel is the value of every label of the label set that takes the
// calls past MaxLabelSets.
const otherLabel = "other"

// The histograms' upper bounds, in seconds.
var (
	upstreamBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}
	addedBuckets    = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}
)

// labelSet holds a metric's label values in the order of its names; a
// metric with fewer labels leaves the rest empty. An array, so that it
// keys a map without an allocation per call.
type labelSet [6]string

// series is one label set's counter or histogram.
type series struct {
	value  int64    // a counter
	counts []uint64 // a histogram: the observations per bucket, not cumulative
	sum    float64
	count  uint64
}

// family is one metric: its label sets and their series.
type family struct {
	name, help, kind string
	labels           []string
	buckets          []float64 // a histogram's; nil for a counter
	limit            int
	sets             map[labelSet]*series
}

func newFamily(name, kind, help string, buckets []float64, labels ...string) *family {
	return &family{name: name, kind: kind, help: help, buckets: buckets, labels: labels, limit: MaxLabelSets, sets: map[labelSet]*series{}}
}

// at is the series of label set k, made when new; past the limit, the
// series of the label set "other".
func (f *family) at(k labelSet) *series {
	if s := f.sets[k]; s != nil {
		return s
	}
	if len(f.sets) >= f.limit-1 {
		k = labelSet{}
		for i := range f.labels {
			k[i] = otherLabel
		}
		if s := f.sets[k]; s != nil {
			return s
		}
	}
	s := &series{}
	if f.buckets != nil {
		s.counts = make([]uint64, len(f.buckets))
	}
	f.sets[k] = s
	return s
}

func (f *family) add(k labelSet, n int64) { f.at(k).value += n }

func (f *family) observe(k labelSet, d time.Duration) {
	s := f.at(k)
	v := d.Seconds()
	if i, _ := slices.BinarySearch(f.buckets, v); i < len(f.buckets) {
		s.counts[i]++
	}
	s.sum += v
	s.count++
}

// metrics are the meter's counters and histograms, served on GET /metrics
// to the holder of its token.
type metrics struct {
	// token is the token's hash: compared in constant time, whatever the
	// length of the one given.
	token [sha256.Size]byte
	mu    sync.Mutex
	// The metrics, written by mu.
	calls, refusals, tokens, cost, upstream, added *family
}

func newMetrics(token string) *metrics {
	return &metrics{
		token:    sha256.Sum256([]byte(token)),
		calls:    newFamily("gns_guard_meter_calls_total", "counter", "Calls the meter answered, by how they ended.", nil, "repo", "agent", "model", "provider", "endpoint", "outcome"),
		refusals: newFamily("gns_guard_meter_refusals_total", "counter", "Calls the meter refused before sending them upstream, by the rule that refused them.", nil, "rule"),
		tokens:   newFamily("gns_guard_meter_tokens_total", "counter", "Tokens of the calls' usage as the provider reported it (input counts cached, output counts reasoning).", nil, "repo", "agent", "model", "class"),
		cost:     newFamily("gns_guard_meter_cost_micro_usd_total", "counter", "What the settled calls were charged, in millionths of a US dollar.", nil, "repo", "agent", "model"),
		upstream: newFamily("gns_guard_meter_upstream_seconds", "histogram", "Time from sending a call upstream to the end of its answer.", upstreamBuckets, "provider", "endpoint"),
		added:    newFamily("gns_guard_meter_added_seconds", "histogram", "The meter's own time before a call goes upstream: admission.", addedBuckets),
	}
}

// record counts call x, which ended as outcome (its log line's).
func (ms *metrics) record(x *exchange, outcome string) {
	label, rule := metricOutcome(x, outcome)
	repo, agent, model := x.repo.name, x.agent, x.call.Model
	if repo == "" && x.route.Owner != "" {
		repo = x.route.Repo()
	}
	provider, endpoint := string(x.route.Provider), string(x.route.Endpoint)
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.calls.add(labelSet{repo, agent, model, provider, endpoint, label}, 1)
	if rule != "" {
		ms.refusals.add(labelSet{rule}, 1)
	}
	if x.usage.Known {
		ms.tokens.add(labelSet{repo, agent, model, "input"}, x.usage.Input)
		ms.tokens.add(labelSet{repo, agent, model, "cached"}, x.usage.Cached)
		ms.tokens.add(labelSet{repo, agent, model, "output"}, x.usage.Output)
		ms.tokens.add(labelSet{repo, agent, model, "reasoning"}, x.usage.Reasoning)
	}
	if x.id != 0 {
		ms.cost.add(labelSet{repo, agent, model}, x.cost)
	}
	if !x.forwarded.IsZero() {
		ms.added.observe(labelSet{}, x.forwarded.Sub(x.started))
		ms.upstream.observe(labelSet{provider, endpoint}, x.upstreamTook)
	}
}

// metricOutcome is the outcome label of a call that ended as outcome,
// and the rule of a refusal. The first that holds: refused (by the
// meter, before the call went upstream), worst_case (charged its worst
// case, whatever else happened, a settlement that failed too),
// client_gone, upstream_error (the provider could not be reached,
// answered an error status, or its answer was cut), ok.
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

// metricsHandler answers GET /metrics in Prometheus's text format 0.0.4:
// 404 when the meter was started without a metrics token, 401 without
// that token.
func (m *Meter) metricsHandler(w http.ResponseWriter, r *http.Request) {
	if m.metrics == nil {
		http.NotFound(w, r)
		return
	}
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	got := sha256.Sum256([]byte(token))
	if subtle.ConstantTimeCompare(got[:], m.metrics.token[:]) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="gns-guard meter metrics"`)
		http.Error(w, "GET /metrics takes the metrics token: Authorization: Bearer TOKEN", http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_ = m.metrics.write(w)
}

// write writes every metric, by name, each label set in order of its
// values.
func (ms *metrics) write(w io.Writer) error {
	fams := ms.snapshot()
	slices.SortFunc(fams, func(a, b *family) int { return cmp.Compare(a.name, b.name) })
	bw := bufio.NewWriter(w)
	for _, f := range fams {
		f.write(bw)
	}
	return bw.Flush()
}

// snapshot copies the metrics, so that they are written without holding
// up the calls.
func (ms *metrics) snapshot() []*family {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	var out []*family
	for _, f := range []*family{ms.calls, ms.refusals, ms.tokens, ms.cost, ms.upstream, ms.added} {
		c := *f
		c.sets = make(map[labelSet]*series, len(f.sets))
		for k, s := range f.sets {
			cs := *s
			cs.counts = slices.Clone(s.counts)
			c.sets[k] = &cs
		}
		out = append(out, &c)
	}
	return out
}

// write writes one metric: its help, its type, and its series. A
// histogram without labels is written with no observation too.
func (f *family) write(w *bufio.Writer) {
	w.WriteString("# HELP " + f.name + " " + f.help + "\n# TYPE " + f.name + " " + f.kind + "\n")
	if f.buckets != nil && len(f.labels) == 0 && len(f.sets) == 0 {
		f.at(labelSet{})
	}
	keys := make([]labelSet, 0, len(f.sets))
	for k := range f.sets {
		keys = append(keys, k)
	}
	n := len(f.labels)
	slices.SortFunc(keys, func(a, b labelSet) int { return slices.Compare(a[:n], b[:n]) })
	for _, k := range keys {
		s := f.sets[k]
		if f.buckets == nil {
			w.WriteString(f.name + f.labelText(k, "") + " " + strconv.FormatInt(s.value, 10) + "\n")
			continue
		}
		var cum uint64
		for i, b := range f.buckets {
			cum += s.counts[i]
			w.WriteString(f.name + "_bucket" + f.labelText(k, formatFloat(b)) + " " + strconv.FormatUint(cum, 10) + "\n")
		}
		w.WriteString(f.name + "_bucket" + f.labelText(k, "+Inf") + " " + strconv.FormatUint(s.count, 10) + "\n")
		w.WriteString(f.name + "_sum" + f.labelText(k, "") + " " + formatFloat(s.sum) + "\n")
		w.WriteString(f.name + "_count" + f.labelText(k, "") + " " + strconv.FormatUint(s.count, 10) + "\n")
	}
}

// labelText is label set k as the format writes it, with le last when
// given: {name="value",...}, or nothing for no label.
func (f *family) labelText(k labelSet, le string) string {
	var b strings.Builder
	for i, name := range f.labels {
		b.WriteString(name + `="` + escapeLabel(k[i]) + `",`)
	}
	if le != "" {
		b.WriteString(`le="` + le + `",`)
	}
	if b.Len() == 0 {
		return ""
	}
	return "{" + strings.TrimSuffix(b.String(), ",") + "}"
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// escapeLabel is a label value as the format writes it: a backslash, a
// double quote and a newline escaped, and valid UTF-8.
func escapeLabel(v string) string {
	return labelEscaper.Replace(strings.ToValidUTF8(v, "\uFFFD"))
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
