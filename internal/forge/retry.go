package forge

import (
	"io"
	"net/http"
	"time"
)

// retrying makes a request once more when Gitea answers 500, 502, 503 or
// 504 and repeating it cannot do anything twice: any method but POST. Gitea
// on SQLite answers 500 while another writer holds the database; a moment
// later the write goes through. A compare-and-swap that landed is answered
// 409.
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
