package meter

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
)

// Sixteen agents calling at once reuse the meter's connections to the
// provider: 320 calls open about one a concurrent call. The bound is twice
// that: a finished call's connection goes back to the pool just after its
// answer is read, and a call starting in between dials anew. With Go's
// default of 2 idle connections a host the same calls opened 43 to 101.
func TestProviderConnectionsAreReused(t *testing.T) {
	var dials atomic.Int64
	tr := ProviderTransport()
	dial := (&net.Dialer{}).DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dial(ctx, network, addr)
	}
	r := newRig(t, func(o *Options) { o.Transport = tr })
	const clients, calls = 16, 20
	url := r.base(7, "openai") + "/chat/completions"
	body := `{"model":"gpt-4o","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			for range calls {
				if postTo(c, url, agentToken1, body) != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d calls failed", failed.Load())
	}
	if n := dials.Load(); n > 2*clients {
		t.Errorf("%d calls from %d clients opened %d connections to the provider; want at most %d", clients*calls, clients, n, 2*clients)
	}
}
