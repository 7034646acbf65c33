package forge

import (
	"io"
	"net/http"
	"time"
)

// retrying makes a request again, once, when Gitea answers it 500, 502,
// 503 or 504 and making it again cannot do anything twice: every method
// but POST (a PATCH or PUT sends the whole new value; a compare-and-swap
// body write that did land first is answered 409, which the issue
// transaction reads again). Gitea on SQLite answers 500 while another
// writer holds the database; a moment later the write goes through.
type retrying struct {
	next  http.RoundTripper
	pause time.Duration
}

func (t *retrying) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || !transient(resp.StatusCode) || r.Method == http.MethodPost || (r.Body != nil && r.GetBody == nil) {
		return resp, err
	}
	again := r.Clone(r.Context())
	if r.GetBody != nil {
		body, gerr := r.GetBody()
		if gerr != nil {
			return resp, nil
		}
		again.Body = body
	}
	select {
	case <-r.Context().Done():
		return resp, nil
	case <-time.After(t.pause):
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return t.next.RoundTrip(again)
}

// transient says an answer's status is the server's passing trouble.
func transient(status int) bool {
	switch status {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}
