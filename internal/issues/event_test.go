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
