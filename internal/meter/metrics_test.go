package meter

import (
	"context"
	"fmt"
	"io"
	"net/http"
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

	calls0 := `gns_guard_meter_calls_total{repo="acme/app",agent="",`
	text := scraped(t, r, []string{
		"# TYPE gns_guard_meter_calls_total counter",
		calls0 + `model="",provider="openai",endpoint="chat/completions",outcome="refused"} 1`,
		calls0 + `model="gpt-4o",provider="openai",endpoint="chat/completions",outcome="ok"} 4`,
		calls0 + `model="gpt-4o",provider="openai",endpoint="chat/completions",outcome="refused"} 1`,
		"# TYPE gns_guard_meter_refusals_total counter",
		`gns_guard_meter_refusals_total{rule="meter-over-budget"} 1`,
		`gns_guard_meter_refusals_total{rule="meter-request"} 1`,
		"# TYPE gns_guard_meter_tokens_total counter",
		`gns_guard_meter_tokens_total{repo="acme/app",agent="",model="gpt-4o",class="cached"} 12`,
		`gns_guard_meter_tokens_total{repo="acme/app",agent="",model="gpt-4o",class="input"} 48`,
		`gns_guard_meter_tokens_total{repo="acme/app",agent="",model="gpt-4o",class="output"} 4000`,
		`gns_guard_meter_tokens_total{repo="acme/app",agent="",model="gpt-4o",class="reasoning"} 0`,
		"# TYPE gns_guard_meter_cost_micro_usd_total counter",
		`gns_guard_meter_cost_micro_usd_total{repo="acme/app",agent="",model="gpt-4o"} ` + strconv.FormatInt(cost, 10),
		"# TYPE gns_guard_meter_upstream_seconds histogram",
		`gns_guard_meter_upstream_seconds_count{provider="openai",endpoint="chat/completions"} 4`,
		`gns_guard_meter_upstream_seconds_bucket{provider="openai",endpoint="chat/completions",le="+Inf"} 4`,
		"# TYPE gns_guard_meter_added_seconds histogram",
		`gns_guard_meter_added_seconds_count 4`,
		`gns_guard_meter_added_seconds_bucket{le="+Inf"} 4`,
	})
	lines := strings.Split(text, "\n")
	if n := count(lines, "gns_guard_meter_calls_total{"); n != 3 {
		t.Errorf("%d label sets of calls_total, want 3:\n%s", n, text)
	}
	checkBuckets(t, lines, "gns_guard_meter_upstream_seconds_bucket{", len(upstreamBuckets)+1)
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
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8" {
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
		i := strings.Index(l, `le="`)
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
	if resp.StatusCode != 200 || !strings.Contains(body, "# TYPE gns_guard_meter_calls_total counter\n") || !strings.Contains(body, "gns_guard_meter_added_seconds_count 0\n") {
		t.Errorf("/metrics with the token, before any call: %d\n%s", resp.StatusCode, body)
	}
}

// Label values are written escaped: a backslash, a double quote and a
// newline; bytes that are not UTF-8 become U+FFFD.
func TestMetricsEscapeLabels(t *testing.T) {
	ms := newMetrics("t")
	x := &exchange{route: metering.Route{Owner: "acme", Name: "a\"b", Provider: metering.OpenAI, Endpoint: "chat/completions"},
		agent: `back\slash`, call: metering.Call{Model: "two\nlines \xff"}, status: 200}
	ms.record(x, "")
	var b strings.Builder
	if err := ms.write(&b); err != nil {
		t.Fatal(err)
	}
	want := `gns_guard_meter_calls_total{repo="acme/a\"b",agent="back\\slash",model="two\nlines ` + "\uFFFD" + `",provider="openai",endpoint="chat/completions",outcome="ok"} 1` + "\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("want the line\n%s\nin:\n%s", want, b.String())
	}
}

// Past its bound, a metric counts new label sets under "other"; those it
// holds go on counting.
func TestMetricsFoldPastTheBound(t *testing.T) {
	ms := newMetrics("t")
	ms.calls.limit = 3
	for i := range 5 {
		ms.record(&exchange{route: metering.Route{Owner: "acme", Name: fmt.Sprint("r", i)}}, "")
	}
	ms.record(&exchange{route: metering.Route{Owner: "acme", Name: "r0"}}, "")
	var b strings.Builder
	_ = ms.write(&b)
	for _, want := range []string{
		`gns_guard_meter_calls_total{repo="acme/r0",agent="",model="",provider="",endpoint="",outcome="ok"} 2`,
		`gns_guard_meter_calls_total{repo="acme/r1",agent="",model="",provider="",endpoint="",outcome="ok"} 1`,
		`gns_guard_meter_calls_total{repo="other",agent="other",model="other",provider="other",endpoint="other",outcome="other"} 3`,
	} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("want the line\n%s\nin:\n%s", want, b.String())
		}
	}
	if n := strings.Count(b.String(), "gns_guard_meter_calls_total{"); n != 3 {
		t.Errorf("%d label sets, want the bound, 3:\n%s", n, b.String())
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

// A call refused before its address named a repository counts with an
// empty repo.
func TestMetricsNoRepository(t *testing.T) {
	r := newRig(t, withMetrics)
	if resp, body := post(t, r.srv.URL+"/acme/app/openai/v1/chat/completions", agentToken1, chatBody); resp.StatusCode != 404 {
		t.Fatalf("no issue: %d %s", resp.StatusCode, body)
	}
	scraped(t, r, []string{
		`gns_guard_meter_calls_total{repo="",agent="",model="",provider="openai",endpoint="",outcome="refused"} 1`,
		`gns_guard_meter_refusals_total{rule="meter-route"} 1`,
	})
}
