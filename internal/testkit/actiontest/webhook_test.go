package actiontest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// The webhook listener lives here, in a test file: the guard's step never
// gets a webhook delivery, so only the tests that compare the two payloads
// use it. Everything else is fed recorded runs (Runs).

// hook is a webhook of one repository delivering to a listener on
// 127.0.0.1: it captures the payloads the server produces for real events.
type hook struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending []Delivery
	srv     *http.Server
}

// hookEvents are the events the hook subscribes to: everything the guard
// is triggered by.
var hookEvents = []string{"issues", "issue_assign", "issue_label", "issue_milestone", "issue_comment", "pull_request", "pull_request_label"}

// newHook starts a listener and adds a webhook to owner/repo delivering to
// it. Both go away when the test ends.
func newHook(t testing.TB, s *giteatest.Server, owner, repo string) *hook {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hook{}
	h.cond = sync.NewCond(&h.mu)
	h.srv = &http.Server{Handler: http.HandlerFunc(h.receive), ReadHeaderTimeout: 10 * time.Second}
	go h.srv.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { h.srv.Close() })

	body := map[string]any{
		"type":   "gitea",
		"active": true,
		"events": hookEvents,
		"config": map[string]string{"url": "http://" + ln.Addr().String() + "/", "content_type": "json"},
	}
	path := fmt.Sprintf("/repos/%s/%s/hooks", url.PathEscape(owner), url.PathEscape(repo))
	if err := API(context.Background(), s, s.AdminToken, http.MethodPost, path, body, nil); err != nil {
		t.Fatalf("actiontest: adding the webhook: %v", err)
	}
	return h
}

func (h *hook) receive(w http.ResponseWriter, r *http.Request) {
	payload, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	d := Delivery{
		Event:   workflowEvent(r.Header.Get("X-Gitea-Event")),
		Type:    r.Header.Get("X-Gitea-Event-Type"),
		Payload: payload,
	}
	_ = d.readPayload()
	h.mu.Lock()
	h.pending = append(h.pending, d)
	h.cond.Broadcast()
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// workflowEvent maps a webhook event to the workflow event it triggers.
func workflowEvent(e string) string {
	switch {
	case strings.HasPrefix(e, "pull_request"):
		return "pull_request"
	case strings.HasPrefix(e, "issue_comment"):
		return "issue_comment"
	case strings.HasPrefix(e, "issue"):
		return "issues"
	}
	return e
}

// Next waits up to 30 seconds for the first not yet taken delivery that
// match accepts (nil accepts any), takes it and returns it.
func (h *hook) next(t testing.TB, match func(Delivery) bool) Delivery {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	timer := time.AfterFunc(30*time.Second, func() {
		h.mu.Lock()
		h.cond.Broadcast()
		h.mu.Unlock()
	})
	defer timer.Stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		for i, d := range h.pending {
			if match == nil || match(d) {
				h.pending = append(h.pending[:i:i], h.pending[i+1:]...)
				return d
			}
		}
		if !time.Now().Before(deadline) {
			var seen []string
			for _, d := range h.pending {
				seen = append(seen, fmt.Sprintf("%s/%s #%d", d.Event, d.Action, d.Number))
			}
			t.Fatalf("actiontest: no matching webhook delivery within 30s; pending: %v", seen)
		}
		h.cond.Wait()
	}
}
