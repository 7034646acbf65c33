package gateway

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
)

// BareProxy is the least a proxy does: it reads a request whole, as the
// meter does, and passes it to upstream by Go's httputil.ReverseProxy,
// on the meter's transport settings (Go's default, 256 idle connections
// a host). Nothing is checked, counted or stored: what it adds is the
// hop's own cost, which the meter pays too.
//
// Passing the client's body on as it came, rather than read whole, cut
// 16 of 500 streams from the stand-in provider here: the transport closed
// the upstream connection while the answer was read.
func BareProxy(upstream *url.URL) http.Handler {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 256
	rp := &httputil.ReverseProxy{Transport: t, Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(upstream) }}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "the request body could not be read", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /healthz", func(http.ResponseWriter, *http.Request) {})
	return mux
}

// Relay passes the bytes of each connection l accepts to a connection of
// its own to upstream (host:port) and back, reading nothing: what a process
// in the path costs before any HTTP is read. It returns when l is closed.
func Relay(l net.Listener, upstream string) error {
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go relay(c.(*net.TCPConn), upstream)
	}
}

func relay(c *net.TCPConn, upstream string) {
	defer c.Close()
	u, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	defer u.Close()
	go func() {
		_, _ = io.Copy(u, c)
		_ = u.(*net.TCPConn).CloseWrite()
	}()
	_, _ = io.Copy(c, u)
}
