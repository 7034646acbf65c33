package forge

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// A PATCH answered 500 is made once more, with its body, and lands; a
// POST answered 500 is not made again (it could post twice); a server
// that keeps failing is answered after the second try.
func TestTransientAnswersAreTriedOnceMore(t *testing.T) {
	var calls atomic.Int32
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		if calls.Add(1) == 1 || r.URL.Path == "/always" {
			http.Error(w, "database is locked", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	c := &http.Client{Transport: &retrying{next: http.DefaultTransport}}
	do := func(method, path string) int {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(`{"body":"status"}`))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := do(http.MethodPatch, "/comment"); got != 200 || calls.Load() != 2 || bodies[1] != `{"body":"status"}` {
		t.Errorf("PATCH after a 500: %d in %d calls, bodies %q", got, calls.Load(), bodies)
	}
	calls.Store(0)
	if got := do(http.MethodPost, "/comment"); got != 500 || calls.Load() != 1 {
		t.Errorf("POST after a 500: %d in %d calls, want the 500 and no second call", got, calls.Load())
	}
	calls.Store(5)
	if got := do(http.MethodGet, "/always"); got != 500 || calls.Load() != 7 {
		t.Errorf("a server that keeps failing: %d after %d calls, want 500 after 2", got, calls.Load()-5)
	}
}
