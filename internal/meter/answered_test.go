package meter

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/meterstore"
	"github.com/gns-guard/gns-guard/internal/receipt"
)

// The meter settles a call after its answer, off the client's path. A
// receipt or a statement asked for the moment the answer ends still
// counts the call, settled at what the provider charged: each waits for
// the settlements of the calls answered before it.
func TestAReceiptRightAfterTheAnswerCountsTheCall(t *testing.T) {
	r := newRig(t)
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	get := func(path string, v any) {
		req, _ := http.NewRequest(http.MethodGet, r.srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+agentToken1)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
	}
	stream := strings.Replace(chatBody, `"max_tokens":50`, `"max_tokens":50,"stream":true`, 1)
	var charged int64
	for i := range 40 {
		body := chatBody
		if i%2 == 1 {
			body = stream
		}
		req, _ := http.NewRequest(http.MethodPost, r.base(7, "openai")+"/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+agentToken1)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("call %d: %d %v", i, resp.StatusCode, err)
		}
		charged += r.prov.Requests()[i].Charged
		var rc receipt.Receipt
		get("/acme/app/issues/7/invocations/inv-1/receipt", &rc)
		if rc.Calls != int64(i+1) || rc.Tokens != charged || rc.WorstCase != 0 {
			t.Fatalf("the receipt asked for right after call %d: %d calls, %d tokens, %d of them worst cases; want %d calls, %d tokens, none",
				i, rc.Calls, rc.Tokens, rc.WorstCase, i+1, charged)
		}
		var st receipt.Statement
		get("/acme/app/issues/7/metered", &st)
		if len(st.Invocations) != 1 || st.Invocations[0].Tokens != charged || st.Invocations[0].InFlight != 0 {
			t.Fatalf("the statement asked for right after call %d: %+v; want %d tokens, none in flight", i, st.Invocations, charged)
		}
	}
}

// A settlement queued behind a slow write still counts in a receipt asked
// for the moment the stream ends, though the receipt's read reaches the
// store before the settlement does.
func TestAReceiptWaitsForASettlementBehindAnotherWrite(t *testing.T) {
	r := newRig(t)
	r.prov.Delay.Store(int64(5 * time.Millisecond))
	stream := strings.Replace(chatBody, `"max_tokens":50`, `"max_tokens":50,"stream":true`, 1)
	req, _ := http.NewRequest(http.MethodPost, r.base(7, "openai")+"/chat/completions", strings.NewReader(stream))
	req.Header.Set("Authorization", "Bearer "+agentToken1)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the stream: %v %v", resp, err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	// The stream is under way: a write that holds the store for 200 ms.
	slow := make(chan error, 1)
	go func() {
		_, _, _, err := r.store.Reserve(context.Background(), meterstore.Call{Issue: issue7, Invocation: "slow", Started: time.Now()},
			func(metering.Pending) *metering.Refusal {
				time.Sleep(200 * time.Millisecond)
				return &metering.Refusal{Rule: "slow"}
			})
		slow <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Fatal(err)
	}
	rc := getReceipt(t, r)
	if charged := r.prov.Requests()[0].Charged; rc.Calls != 1 || rc.Tokens != charged || rc.WorstCase != 0 {
		t.Errorf("the receipt asked for as the stream ended: %d calls, %d tokens, %d of them worst cases; want 1 call, %d tokens, none",
			rc.Calls, rc.Tokens, rc.WorstCase, charged)
	}
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
}
