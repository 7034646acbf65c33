package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/meter"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/meterstore"
	"github.com/gns-guard/gns-guard/internal/receipt"
	"github.com/gns-guard/gns-guard/internal/testkit/sdkclient"
	"github.com/gns-guard/gns-guard/internal/testkit/standin"
)

// journeyMeter is the meter the journey's agents spend through, in front
// of a stand-in provider.
type journeyMeter struct {
	URL     string
	prov    *standin.Provider
	store   *meterstore.Store
	calls   int
	refused int
	spent   bool // the last step's call went through
	// charged is what the stand-in's answers charged: the sum of their
	// usage.total_tokens.
	charged int64
}

// startMeter starts the journey's meter on the test's server.
func (j *journey) startMeter() *journeyMeter {
	t := j.t
	store, err := meterstore.Open(context.Background(), filepath.Join(j.dir, "meter.db"))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := receipt.NewKey([]byte(strings.Repeat("journey-meter-", 3)))
	jm := &journeyMeter{prov: standin.Start(t), store: store}
	m, err := meter.New(meter.Options{Server: j.r.srv.URL, Store: store, Key: key, IssueTTL: time.Millisecond, Connect: connectGitea,
		Upstream: map[metering.Provider]string{metering.OpenAI: jm.prov.URL},
		Keys:     map[metering.Provider]string{metering.OpenAI: standin.OpenAIKey}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Serve(ctx, l, time.Minute) }()
	t.Cleanup(func() { cancel(); <-done; store.Close() })
	jm.URL = "http://" + l.Addr().String()
	return jm
}

// spend is an agent's work on step k: one call through the meter with
// the official openai SDK (sdkclient), its base URL the meter's for the
// step's invocation and its key the agents' token, whose answer is work
// tokens long. A call the meter refuses (the budget would not hold it)
// is noted; the agent reports what it spent all the same.
func (j *journey) spend(k int, inv string, work int) {
	if j.meter == nil {
		j.meter = j.startMeter()
	}
	jm := j.meter
	jm.prov.Output.Store(int64(work))
	base := fmt.Sprintf("%s/%s/issues/%d/invocations/%s/openai/v1", jm.URL, j.repoName(), j.n, inv)
	res := sdkclient.Run(j.t, []sdkclient.Call{{SDK: "openai", Kind: "chat", BaseURL: base, APIKey: j.agent.Token,
		Body: map[string]any{"model": "gpt-4.1", "max_tokens": work, "messages": []map[string]any{{"role": "user", "content": fmt.Sprintf("step %d", k)}}}}})
	if len(res) != 1 {
		j.t.Fatalf("step %d: the SDK made %d calls, want 1", k, len(res))
	}
	r := res[0]
	jm.spent = r.Error == nil
	switch {
	case r.Error == nil:
		jm.calls++
		total, _ := r.Usage["total_tokens"].(float64)
		if total <= 0 {
			j.t.Fatalf("step %d: the SDK saw no usage: %+v", k, r)
		}
		jm.charged += int64(total)
	case r.Error.Status == 403:
		jm.refused++
		j.cur.note += "; the meter refused the work call: " + refusalRule(r.Error.Message)
	default:
		j.t.Fatalf("step %d: the SDK's call through the meter failed: %+v", k, *r.Error)
	}
}

// refusalRule is the rule a refusal names.
func refusalRule(body string) string {
	if i := strings.LastIndex(body, "["); i >= 0 {
		if e := strings.Index(body[i:], "]"); e > 0 {
			return body[i+1 : i+e]
		}
	}
	return body
}

// meteredNote says what the meter counted, for the summary.
func (j *journey) meteredNote() string {
	if j.meter == nil {
		return "no call through the meter"
	}
	var repo struct {
		ID int64 `json:"id"`
	}
	j.r.must(http.MethodGet, j.r.path(""), nil, &repo)
	rows, err := j.meter.store.Issues(context.Background(), meter.RepoKey(repo.ID)) // one budget a repository, keyed by its id
	if err != nil || len(rows) != 1 {
		j.t.Fatalf("the meter's totals: %v %v", rows, err)
	}
	if rows[0].Tokens != j.meter.charged || rows[0].Calls != int64(j.meter.calls) {
		j.t.Errorf("the meter counts %d calls and %d tokens on the issue; the stand-in answered %d and charged %d", rows[0].Calls, rows[0].Tokens, j.meter.calls, j.meter.charged)
	}
	return fmt.Sprintf("%d calls through the meter (%d refused), %d tokens metered, what the stand-in charged", rows[0].Calls, j.meter.refused, rows[0].Tokens)
}

// connectGitea connects the meter to the real server, as the binary does.
func connectGitea(server, token, owner, name string) (meter.Client, error) {
	return forge.New(server, token, owner, name)
}
