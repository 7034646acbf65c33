package meter

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/port"
)

const metricsToken = "metrics-token-of-the-operator"

// withMetrics starts the meter with a metrics token.
func withMetrics(o *Options) { o.MetricsToken = metricsToken }

// scrape gets /metrics with token ("": no Authorization).
func scrape(t *testing.T, r *rig, token string) (*http.Response, string) {
	t.Helper()
	r.quiet()
	req, _ := http.NewRequest(http.MethodGet, r.srv.URL+"/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

// The metrics count the calls by outcome, the refusals by rule, the
// settled usage and cost, and time the calls that went upstream.
func TestMetrics(t *testing.T) {
	r := newRig(t, withMetrics)
	prices := []byte("prices:\n  - gpt-4o 2.50 10.00 1.25\n")
	if _, err := r.gitea.As("acme").CommitFiles(context.Background(), port.Commit{Files: []port.FileChange{{Path: ".gitea/gns-guard.yml", Content: prices}}}); err != nil {
		t.Fatal(err)
	}
	r.gitea.Change(7, func(is *issues.Issue) {
		is.Body = strings.Replace(body(7, 20000, 4500), "next_estimated_tokens: 3500", "next_estimated_tokens: 1000", 1)
	})
	judge(t, r.gitea, 7)
	r.prov.Output.Store(1000)
	r.prov.Cached.Store(3)
	chat := r.base(7, "openai") + "/chat/completions"
	call := `{"model":"gpt-4o","max_tokens":1000,"messages":[{"role":"user","content":"hello"}]}`
	for i := range 4 {
		if resp, body := post(t, chat, agentToken1, call); resp.StatusCode != 200 {
			t.Fatalf("call %d: %d %s", i, resp.StatusCode, body)
		}
	}
	if resp, body := post(t, chat, agentToken1, call); resp.StatusCode != 403 || !strings.Contains(body, "meter-over-budget") {
		t.Fatalf("the fifth call: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(t, chat, agentToken1, `{"model": "gpt-4o", "messages": [`); resp.StatusCode != 400 {
		t.Fatalf("a malformed call: %d %s", resp.StatusCode, body)
	}
	var cost int64
	for _, c := range settled(t, r, 4) {
		cost += c.Cost
	}
	if cost <= 0 {
		t.Fatalf("the calls cost %d: gpt-4o has no price", cost)
	}

	spend := `agent="",model="gpt-4o",provider="openai",repo="acme/app"`
	text := scraped(t, r, []string{
		"# TYPE gns_guard_meter_calls_total counter",
		`gns_guard_meter_calls_total{agent="",endpoint="chat/completions",model="gpt-4o",outcome="ok",provider="openai",repo="acme/app"} 4`,
		`gns_guard_meter_calls_total{agent="",endpoint="chat/completions",model="gpt-4o",outcome="refused",provider="openai",repo="acme/app"} 1`,
		`gns_guard_meter_calls_total{agent="",endpoint="chat/completions",model="",outcome="refused",provider="openai",repo=""} 1`,
		"# TYPE gns_guard_meter_refusals_total counter",
		`gns_guard_meter_refusals_total{rule="meter-over-budget"} 1`,
		`gns_guard_meter_refusals_total{rule="meter-request"} 1`,
		"# TYPE gns_guard_meter_tokens_total counter",
		`gns_guard_meter_tokens_total{agent="",class="cached",model="gpt-4o",provider="openai",repo="acme/app"} 12`,
		`gns_guard_meter_tokens_total{agent="",class="input",model="gpt-4o",provider="openai",repo="acme/app"} 48`,
		`gns_guard_meter_tokens_total{agent="",class="output",model="gpt-4o",provider="openai",repo="acme/app"} 4000`,
		`gns_guard_meter_tokens_total{agent="",class="reasoning",model="gpt-4o",provider="openai",repo="acme/app"} 0`,
		"# TYPE gns_guard_meter_cost_usd_total counter",
		`gns_guard_meter_cost_usd_total{` + spend + `} ` + strconv.FormatFloat(float64(cost)/1e6, 'g', -1, 64),
		"# TYPE gen_ai_client_token_usage histogram",
		`gen_ai_client_token_usage_count{gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="gpt-4o",gen_ai_token_type="output"} 4`,
		`gen_ai_client_token_usage_sum{gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="gpt-4o",gen_ai_token_type="output"} 4000`,
		"# TYPE gen_ai_client_operation_duration_seconds histogram",
		`gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="gpt-4o"} 4`,
		`gns_guard_meter_upstream_first_byte_seconds_count{endpoint="chat/completions",provider="openai"} 4`,
		"# TYPE gns_guard_meter_added_seconds histogram",
		`gns_guard_meter_added_seconds_count 4`,
		`gns_guard_meter_added_seconds_bucket{le="+Inf"} 4`,
		"# TYPE gns_guard_meter_reservations_in_flight gauge",
		`gns_guard_meter_reservations_in_flight 0`,
	})
	lines := strings.Split(text, "\n")
	if n := count(lines, "gns_guard_meter_calls_total{"); n != 3 {
		t.Errorf("%d label sets of calls_total, want 3:\n%s", n, text)
	}
	checkBuckets(t, lines, `gen_ai_client_operation_duration_seconds_bucket{gen_ai_operation_name="chat"`, len(upstreamBuckets)+1)
	checkBuckets(t, lines, "gns_guard_meter_added_seconds_bucket{", len(addedBuckets)+1)
	if _, again := scrape(t, r, metricsToken); again != text {
		t.Errorf("a second scrape with no call between differs:\n%s\nthen:\n%s", text, again)
	}
}

func count(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// scraped scrapes /metrics until it holds every line of want: a call is
// counted when its log line is written, which may come just after its
// client has the answer.
func scraped(t *testing.T, r *rig, want []string) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, text := scrape(t, r, metricsToken)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
			t.Fatalf("/metrics: %d %q\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), text)
		}
		lines := strings.Split(text, "\n")
		missing := slices.DeleteFunc(slices.Clone(want), func(w string) bool { return slices.Contains(lines, w) })
		if len(missing) == 0 {
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics lacks the lines\n%s\nin:\n%s", strings.Join(missing, "\n"), text)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkBuckets checks a histogram's buckets: n of them, le rising to
// +Inf, their counts never falling.
func checkBuckets(t *testing.T, lines []string, prefix string, n int) {
	t.Helper()
	var les []string
	last := int64(-1)
	for _, l := range lines {
		if !strings.HasPrefix(l, prefix) {
			continue
		}
		i := strings.LastIndex(l, `le="`)
		le, rest, _ := strings.Cut(l[i+4:], `"`)
		v, err := strconv.ParseInt(strings.TrimPrefix(rest, "} "), 10, 64)
		if err != nil || v < last {
			t.Errorf("%s: the count %q falls below %d or is no count", l, rest, last)
		}
		last = v
		les = append(les, le)
	}
	if len(les) != n || les[n-1] != "+Inf" {
		t.Errorf("%s: buckets %v, want %d ending in +Inf", prefix, les, n)
	}
}

// /metrics is served only to the holder of the token the meter was
// started with; without one it is not there at all.
func TestMetricsAccess(t *testing.T) {
	off := newRig(t)
	if resp, body := scrape(t, off, metricsToken); resp.StatusCode != 404 {
		t.Errorf("/metrics without --metrics-token-env: %d %s", resp.StatusCode, body)
	}
	if strings.Contains(off.log.String(), "metrics") {
		t.Errorf("a scrape was logged as a call:\n%s", off.log)
	}
	on := newRig(t, withMetrics)
	for _, token := range []string{"", "wrong", metricsToken + "x", metricsToken[:5]} {
		resp, body := scrape(t, on, token)
		if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" || strings.Contains(body, "gns_guard_meter") {
			t.Errorf("/metrics with token %q: %d %s", token, resp.StatusCode, body)
		}
	}
	resp, body := scrape(t, on, metricsToken)
	if resp.StatusCode != 200 || !strings.Contains(body, "# TYPE gns_guard_meter_added_seconds histogram\n") || !strings.Contains(body, "gns_guard_meter_added_seconds_count 0\n") {
		t.Errorf("/metrics with the token, before any call: %d\n%s", resp.StatusCode, body)
	}
}

// Label values are written escaped: a backslash, a double quote and a
// newline.
func TestMetricsEscapeLabels(t *testing.T) {
	ms := newMetrics("t", false)
	x := &exchange{route: metering.Route{Owner: "acme", Name: "app", Provider: metering.OpenAI, Endpoint: "chat/completions"},
		repo: repository{id: 1, name: `acme/a"b`}, agent: `back\slash`, call: metering.Call{Model: "two\nlines"}, status: 200}
	ms.record(x, "")
	want := `gns_guard_meter_calls_total{agent="back\\slash",endpoint="chat/completions",model="two\nlines",outcome="ok",provider="openai",repo="acme/a\"b"} 1`
	if text := gather(t, ms); !strings.Contains(text, want+"\n") {
		t.Errorf("want the line\n%s\nin:\n%s", want, text)
	}
}

// gather is the metrics as a scrape writes them.
func gather(t *testing.T, ms *metrics) string {
	t.Helper()
	srv := httptest.NewServer((&Meter{metrics: ms}).metricsHandler())
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Authorization", "Bearer t")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return string(data)
}

// Past its bound, a metric counts new label sets under "other"; those it
// holds go on counting.
func TestMetricsFoldPastTheBound(t *testing.T) {
	ms := newMetrics("t", false)
	ms.calls.b.limit = 3
	for i := range 5 {
		ms.record(&exchange{repo: repository{name: fmt.Sprint("acme/r", i)}}, "")
	}
	ms.record(&exchange{repo: repository{name: "acme/r0"}}, "")
	text := gather(t, ms)
	for _, want := range []string{
		`gns_guard_meter_calls_total{agent="",endpoint="",model="",outcome="ok",provider="",repo="acme/r0"} 2`,
		`gns_guard_meter_calls_total{agent="",endpoint="",model="",outcome="ok",provider="",repo="acme/r1"} 1`,
		`gns_guard_meter_calls_total{agent="other",endpoint="other",model="other",outcome="other",provider="other",repo="other"} 3`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("want the line\n%s\nin:\n%s", want, text)
		}
	}
	if n := strings.Count(text, "gns_guard_meter_calls_total{"); n != 3 {
		t.Errorf("%d label sets, want the bound, 3:\n%s", n, text)
	}
}

// The issue is a label of spend only when the operator asks for it.
func TestMetricsIssueLabel(t *testing.T) {
	x := &exchange{route: metering.Route{Issue: 7, Provider: metering.OpenAI}, repo: repository{id: 1, name: "acme/app"}, id: 1, cost: 2500000}
	for _, withIssue := range []bool{false, true} {
		ms := newMetrics("t", withIssue)
		ms.record(x, "")
		text := gather(t, ms)
		if got := strings.Contains(text, `gns_guard_meter_cost_usd_total{agent="",issue="7",model="",provider="openai",repo="acme/app"} 2.5`); got != withIssue {
			t.Errorf("with the issue label %v:\n%s", withIssue, text)
		}
	}
}

// A call's outcome label follows its log line's outcome.
func TestMetricOutcome(t *testing.T) {
	for _, tt := range []struct {
		outcome     string
		status      int
		label, rule string
	}{
		{"", 200, "ok", ""},
		{"refused:meter-over-budget", 403, "refused", "meter-over-budget"},
		{"refused:meter-upstream", 502, "upstream_error", ""},
		{"refused:meter-upstream:charged-worst-case", 502, "worst_case", ""},
		{"usage-unread:charged-worst-case", 200, "worst_case", ""},
		{"client-gone:read-limit:stream-cut:charged-worst-case", 200, "worst_case", ""},
		{"client-gone:usage-read", 200, "client_gone", ""},
		{"settle-failed:database is locked", 200, "worst_case", ""},
		{"stream-cut", 200, "upstream_error", ""},
		{"", 429, "upstream_error", ""},
	} {
		label, rule := metricOutcome(&exchange{status: tt.status}, tt.outcome)
		if label != tt.label || rule != tt.rule {
			t.Errorf("%q (status %d): %q %q, want %q %q", tt.outcome, tt.status, label, rule, tt.label, tt.rule)
		}
	}
}

// A call refused before the meter knew its repository counts with an
// empty repo: no stranger names label sets.
func TestMetricsNoRepository(t *testing.T) {
	r := newRig(t, withMetrics)
	if resp, body := post(t, r.srv.URL+"/acme/app/openai/v1/chat/completions", agentToken1, chatBody); resp.StatusCode != 404 {
		t.Fatalf("no issue: %d %s", resp.StatusCode, body)
	}
	scraped(t, r, []string{
		`gns_guard_meter_calls_total{agent="",endpoint="",model="",outcome="refused",provider="openai",repo=""} 1`,
		`gns_guard_meter_refusals_total{rule="meter-route"} 1`,
	})
}
