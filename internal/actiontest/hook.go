package actiontest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/giteatest"
)

// Delivery is one event the real server sent, as a workflow would get it.
type Delivery struct {
	// Event is the workflow event name (GITHUB_EVENT_NAME): issues,
	// issue_comment or pull_request.
	Event string
	// Type is the server's finer event type (X-Gitea-Event-Type), e.g.
	// issue_label for a label change.
	Type string
	// Action, Number and Sender are read from the payload.
	Action string
	Number int64
	Sender string
	// Payload is the event file's content, byte for byte as sent.
	Payload []byte
}

// Hook is a webhook of one repository delivering to a listener on
// 127.0.0.1: it captures the payloads the server produces for real events.
type Hook struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending []Delivery
	srv     *http.Server
}

// hookEvents are the events the hook subscribes to: everything the guard
// is triggered by.
var hookEvents = []string{"issues", "issue_assign", "issue_label", "issue_milestone", "issue_comment", "pull_request", "pull_request_label"}

// NewHook starts a listener and adds a webhook to owner/repo delivering to
// it. Both go away when the test ends.
func NewHook(t testing.TB, s *giteatest.Server, owner, repo string) *Hook {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &Hook{}
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

func (h *Hook) receive(w http.ResponseWriter, r *http.Request) {
	payload, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var p struct {
		Action string `json:"action"`
		Number int64  `json:"number"`
		Issue  struct {
			Number int64 `json:"number"`
		} `json:"issue"`
		Sender struct {
			Login string `json:"login"`
		} `json:"sender"`
	}
	_ = json.Unmarshal(payload, &p)
	d := Delivery{
		Event:   workflowEvent(r.Header.Get("X-Gitea-Event")),
		Type:    r.Header.Get("X-Gitea-Event-Type"),
		Action:  p.Action,
		Number:  p.Issue.Number,
		Sender:  p.Sender.Login,
		Payload: payload,
	}
	if d.Number == 0 {
		d.Number = p.Number
	}
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
func (h *Hook) Next(t testing.TB, match func(Delivery) bool) Delivery {
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

// Is matches a delivery by workflow event, action and issue number.
func Is(event, action string, number int64) func(Delivery) bool {
	return func(d Delivery) bool { return d.Event == event && d.Action == action && d.Number == number }
}

// API sends a JSON request to the server's API with a token, within a
// minute, and decodes the JSON answer into out (if non-nil).
func API(ctx context.Context, s *giteatest.Server, token, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return s.API(ctx, token, method, path, in, out)
}

// Example returns a shipped example issue body (examples/issues/NAME) with
// its checkpoint's issue number set to number.
func Example(t testing.TB, name string, number int64) string {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "examples", "issues", name))
	if err != nil {
		t.Fatal(err)
	}
	return issueKey.ReplaceAllString(string(data), "${1}"+strconv.FormatInt(number, 10))
}

var issueKey = regexp.MustCompile(`(?m)^(\s*issue:\s*)\d+`)

// LabelIDs returns the ids of the named labels of owner/repo, creating the
// missing ones.
func LabelIDs(t testing.TB, s *giteatest.Server, owner, repo string, names ...string) []int64 {
	t.Helper()
	ctx := context.Background()
	var have []struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	base := fmt.Sprintf("/repos/%s/%s/labels", url.PathEscape(owner), url.PathEscape(repo))
	if err := API(ctx, s, s.AdminToken, http.MethodGet, base+"?limit=50", nil, &have); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, name := range names {
		id := int64(0)
		for _, l := range have {
			if l.Name == name {
				id = l.ID
			}
		}
		if id == 0 {
			var l struct {
				ID int64 `json:"id"`
			}
			if err := API(ctx, s, s.AdminToken, http.MethodPost, base, map[string]string{"name": name, "color": "#888888"}, &l); err != nil {
				t.Fatal(err)
			}
			id = l.ID
		}
		ids = append(ids, id)
	}
	return ids
}

// CreateIssue opens an issue as the administrator with the given labels;
// body receives the number the issue will get. It returns the number.
func CreateIssue(t testing.TB, s *giteatest.Server, owner, repo, title string, body func(number int64) string, labels ...string) int64 {
	t.Helper()
	ctx := context.Background()
	base := fmt.Sprintf("/repos/%s/%s/issues", url.PathEscape(owner), url.PathEscape(repo))
	var last []struct {
		Number int64 `json:"number"`
	}
	if err := API(ctx, s, s.AdminToken, http.MethodGet, base+"?state=all&limit=1", nil, &last); err != nil {
		t.Fatal(err)
	}
	next := int64(1)
	if len(last) > 0 {
		next = last[0].Number + 1
	}
	in := map[string]any{"title": title, "body": body(next)}
	if len(labels) > 0 {
		in["labels"] = LabelIDs(t, s, owner, repo, labels...)
	}
	var got struct {
		Number int64 `json:"number"`
	}
	if err := API(ctx, s, s.AdminToken, http.MethodPost, base, in, &got); err != nil {
		t.Fatal(err)
	}
	if got.Number != next {
		t.Fatalf("actiontest: expected the new issue to be #%d, it is #%d", next, got.Number)
	}
	return got.Number
}
