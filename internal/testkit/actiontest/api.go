package actiontest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// Delivery is one event as the guard's step gets it: the payload of a
// workflow run the server recorded (see Runs), or, in the tests that
// compare the two, a webhook delivery.
type Delivery struct {
	// Event is the workflow event name (GITHUB_EVENT_NAME): issues,
	// issue_comment or pull_request.
	Event string
	// Type is the server's finer event type (the run's event column, or a
	// webhook's X-Gitea-Event-Type), e.g. issue_label for a label change.
	Type string
	// Action, Number and Sender are read from the payload.
	Action string
	Number int64
	Sender string
	// TriggerUser is the login of the run's trigger user (empty for a
	// webhook delivery).
	TriggerUser string
	// Run is the id of the recorded run (0 for a webhook delivery).
	Run int64
	// Commit is the run's commit (GITHUB_SHA): for issue and comment
	// events, the default branch's head when the event happened.
	Commit string
	// Payload is the event file's content, byte for byte as the runner
	// writes it (or as the webhook sent it).
	Payload []byte
}

// readPayload sets Action, Number and Sender from the payload: the issue's
// number, or the pull request's.
func (d *Delivery) readPayload() error {
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
	if err := json.Unmarshal(d.Payload, &p); err != nil {
		return err
	}
	d.Action, d.Number, d.Sender = p.Action, p.Issue.Number, p.Sender.Login
	if d.Number == 0 {
		d.Number = p.Number
	}
	return nil
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
	root, err := testkit.Root()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "examples", "issues", name))
	if err != nil {
		t.Fatal(err)
	}
	return WithIssue(string(data), number)
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
	return CreateIssueAs(t, s, s.AdminToken, owner, repo, title, body, labels...)
}

// CreateIssueAs is CreateIssue as the user of token.
func CreateIssueAs(t testing.TB, s *giteatest.Server, token, owner, repo, title string, body func(number int64) string, labels ...string) int64 {
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
	if err := API(ctx, s, token, http.MethodPost, base, in, &got); err != nil {
		t.Fatal(err)
	}
	if got.Number != next {
		t.Fatalf("actiontest: expected the new issue to be #%d, it is #%d", next, got.Number)
	}
	return got.Number
}
