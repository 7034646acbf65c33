package meter

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// /healthz answers while the store does; on SIGTERM (the context's end)
// the meter takes no new call, lets a stream in flight finish, and
// settles and logs it before Serve returns.
func TestHealthzAndGracefulStop(t *testing.T) {
	r := newRig(t)
	r.prov.Delay.Store(int64(20 * time.Millisecond))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.m.Serve(ctx, l, time.Minute) }()

	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(data)) != "ok" {
		t.Fatalf("/healthz: %d %q", resp.StatusCode, data)
	}

	req, _ := http.NewRequest(http.MethodPost, base+"/acme/app/issues/7/invocations/inv-1/openai/v1/chat/completions",
		strings.NewReader(`{"model":"gpt-4o","max_tokens":20,"stream":true,"messages":[{"role":"user","content":"hello"}]}`))
	req.Header.Set("Authorization", "Bearer "+agentToken1)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel() // SIGTERM while the stream is in flight
	rest, err := io.ReadAll(br)
	if err != nil || !strings.HasSuffix(string(rest), "data: [DONE]\n\n") {
		t.Errorf("the stream in flight was cut at the stop: %v\n%s", err, rest)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	// Serve returned once the call was settled and logged, which the meter
	// does after the answer.
	calls, err := r.store.Calls(context.Background(), issue7)
	r.log.mu.Lock()
	logged := r.log.b.String()
	r.log.mu.Unlock()
	if err != nil || len(calls) != 1 || !calls[0].Settled || !strings.Contains(logged, " ok\n") {
		t.Errorf("after Serve returned: %+v, %v; log %q", calls, err, logged)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the stopped meter still takes calls")
	}
}
