package gateway

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestRelayAndBareProxyPassCallsAndStreams checks both hops the
// side-by-side benchmark compares pass a call and a stream whole.
func TestRelayAndBareProxyPassCallsAndStreams(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, ev := range []string{"data: {\"n\":1}\n\n", "data: [DONE]\n\n"} {
				_, _ = io.WriteString(w, ev)
				w.(http.Flusher).Flush()
			}
			return
		}
		_, _ = io.WriteString(w, "echo "+string(body))
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Relay(l, u.Host) }()
	bare := httptest.NewServer(BareProxy(u))
	defer bare.Close()

	c := &http.Client{}
	for _, base := range []string{"http://" + l.Addr().String(), bare.URL} {
		for body, want := range map[string]string{
			Call:   "echo " + Call,
			Stream: "data: {\"n\":1}\n\ndata: [DONE]\n\n",
		} {
			resp, err := c.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || string(got) != want {
				t.Errorf("%s: got %q, %v; want %q", base, got, err, want)
			}
		}
	}
	c.CloseIdleConnections()
	l.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Relay after its listener closed: %v, want net.ErrClosed", err)
	}
}
