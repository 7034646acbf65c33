package issues

import (
	"strings"
	"testing"
)

// A run a person or a schedule started names no issue in its payload: it
// is handled only when the issue-number input names one (the shell sets
// Number from it), and otherwise skipped with a message that says how.
func TestDispatchAndScheduleRuns(t *testing.T) {
	for _, name := range []string{"workflow_dispatch", "schedule"} {
		e, err := ParseEvent(name, []byte(`{"inputs": {}, "ref": "refs/heads/main", "sender": {"login": "alice"}}`))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ok, why := e.Supported(); ok || !strings.Contains(why, "issue-number") {
			t.Errorf("%s without issue-number: supported %v, %q", name, ok, why)
		}
		e.Number = 7
		if ok, why := e.Supported(); !ok {
			t.Errorf("%s with issue-number 7: %s", name, why)
		}
	}
	if _, err := ParseEvent("issues", []byte(`{"action": "opened"}`)); err == nil {
		t.Error("an issues payload with no issue was accepted")
	}
}

// Every event on a pull request is one the guard judges it on, and says it
// is on a pull request: its own (pull_request_target, as the shipped
// workflow sends it), a label, a review, and a comment (issue_comment with
// the issue's pull_request set).
func TestPullRequestEvents(t *testing.T) {
	for _, c := range []struct{ name, payload string }{
		{"pull_request_target", `{"action": "opened", "number": 4, "pull_request": {"number": 4}}`},
		{"pull_request_target", `{"action": "label_updated", "number": 4, "pull_request": {"number": 4}}`},
		{"pull_request", `{"action": "synchronized", "number": 4, "pull_request": {"number": 4}}`},
		{"pull_request_review", `{"action": "reviewed", "number": 4, "pull_request": {"number": 4}}`},
		{"issue_comment", `{"action": "created", "is_pull": true, "issue": {"number": 4, "pull_request": {}}, "comment": {"id": 9, "body": "hi"}}`},
	} {
		e, err := ParseEvent(c.name, []byte(c.payload))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if ok, why := e.Supported(); !ok || !e.IsPull || e.Number != 4 {
			t.Errorf("%s %s: supported %v (%s), on a pull request %v, number %d", c.name, e.Action, ok, why, e.IsPull, e.Number)
		}
	}
}
