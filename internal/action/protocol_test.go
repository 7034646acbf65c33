package action_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// footer is a complete GNS_EVENT footer for a subagent_result, with fields
// merged over it.
func footer(t *testing.T, agent, phase string, depth int, fields map[string]any) string {
	t.Helper()
	ev := map[string]any{
		"agent": agent, "invocation": "inv-20260516-1400-c3", "event_type": "subagent_result",
		"phase": phase, "depth": depth,
		"budget": map[string]int{"before": 140000, "consumed": 900, "remaining": 139100},
		"status": "done", "verdict": "approve", "files_changed": []string{"internal/ratelimit/bucket.go"},
		"key_stats": map[string]any{"findings": 0}, "next_agent": "",
	}
	for k, v := range fields {
		ev[k] = v
	}
	j, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return "<!-- GNS_EVENT " + string(j) + " -->"
}

// result is an agent result comment: header, report, footer.
func result(t *testing.T, agent, phase string, depth int, fields map[string]any) string {
	t.Helper()
	return fmt.Sprintf("## 🔄 %s | phase:%s | depth:%d\n\nReviewed the rate limiter: tests and docs are in order.\n\n%s", agent, phase, depth, footer(t, agent, phase, depth, fields))
}

// comment-protocol: an agent result comment without the machine-readable
// footer fails; a well-formed one passes.
func TestCommentProtocol(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	n, _ := f.Open(t, "results", example(t, "healthy.md"), "cascade::depth-2", "size::medium", "phase::implementation")

	bad := "## 🔄 code-reviewer | phase:implementation | depth:1\n\nReviewed the middleware: looks fine.\n"
	id, d := f.Comment(t, n, agent, bad)
	r := f.Run(t, d)
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "comment-protocol")
	v := r.Violations(t)[0]
	if v.KeyPath != fmt.Sprintf("comment#%d", id) || v.Line != 3 || !strings.Contains(v.Message, "footer is missing") {
		t.Errorf("violation %+v, expected comment#%d at line 3 saying the footer is missing", v, id)
	}
	status := f.Status(t, n)
	if !strings.Contains(status.Body, fmt.Sprintf("[comment %d](%s/%s/%s/issues/%d#issuecomment-%d) 3:1", id, fakeforge.URL, f.Owner, f.Name, n, id)) {
		t.Errorf("the status comment does not point at the comment:\n%s", status.Body)
	}

	good := "## 🔄 code-reviewer | phase:implementation | depth:1\n\nReviewed the middleware: approved.\n\n" +
		`<!-- GNS_EVENT {"agent":"code-reviewer","invocation":"inv-9","event_type":"subagent_result","phase":"implementation","depth":1,` +
		`"budget":{"before":13800,"consumed":900,"remaining":12900},"status":"done","verdict":"approve","files_changed":0,"key_stats":{"findings":0},"next_agent":""} -->`
	_, d = f.Comment(t, n, agent, good)
	r = f.Run(t, d)
	r.Expect(t, 0, "pass")
	if got := f.Status(t, n); got.ID != status.ID || !strings.Contains(got.Body, "all clear") {
		t.Errorf("status comment %d (was %d):\n%s", got.ID, status.ID, got.Body)
	}
}

// TestCommentProtocolFindingsAreLocated: each broken agent comment fails
// the run with a finding that names the comment, its line and column, and
// what was expected, in the violations output, the log and the status
// comment.
func TestCommentProtocolFindingsAreLocated(t *testing.T) {
	const allowed = "orchestrator,lead-developer,code-reviewer"
	malformed := "## 🔄 code-reviewer | phase:implementation | depth:1\n\nReviewed.\n\n" +
		`<!-- GNS_EVENT {"agent": "code-reviewer", "depth": 1,, "phase": "implementation"} -->`
	cases := []struct {
		name      string
		body      func(t *testing.T) string
		rule      string
		line, col func(body string) int
		message   string // the message after "comment #ID: "
		shown     string // a part of it the status comment shows verbatim
	}{
		{
			name: "malformed footer", rule: "comment-protocol",
			body: func(*testing.T) string { return malformed },
			line: func(string) int { return 5 },
			col: func(string) int {
				return strings.Index(`<!-- GNS_EVENT {"agent": "code-reviewer", "depth": 1,, `, ",, ") + 2
			},
			message: "the GNS_EVENT footer is not valid JSON: invalid character ',' looking for beginning of object key string",
			shown:   "is not valid JSON",
		},
		{
			name: "depth over the cascade limit", rule: "comment-protocol",
			body:    func(t *testing.T) string { return result(t, "code-reviewer", "implementation", 3, nil) },
			line:    func(string) int { return 1 },
			col:     func(string) int { return 1 },
			message: "reports depth 3, over the cascade limit of 2",
			shown:   "reports depth 3, over the cascade limit of 2",
		},
		{
			name: "phase not the checkpoint's", rule: "comment-protocol",
			// The checkpoint records this result (its last invocation):
			// its phase must be the checkpoint's.
			body: func(t *testing.T) string {
				return result(t, "code-reviewer", "review", 1, map[string]any{"invocation": "inv-20260516-1320-a7"})
			},
			line:    func(string) int { return 1 },
			col:     func(string) int { return 1 },
			message: `reports phase "review" but the checkpoint is in phase "implementation"`,
			shown:   `reports phase "review" but the checkpoint is in phase "implementation"`,
		},
		{
			name: "agent not allowed", rule: "agent-not-allowed",
			body:    func(t *testing.T) string { return result(t, "intruder", "implementation", 1, nil) },
			line:    func(string) int { return 1 },
			col:     func(string) int { return 1 },
			message: `agent "intruder" is not in allowed-agents (orchestrator, lead-developer, code-reviewer); the issue is locked until a person resolves it`,
			shown:   `agent "intruder" is not in allowed-agents (orchestrator, lead-developer, code-reviewer)`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeFixture(t)
			agent := f.User(t, "agent", giteatest.PermWrite)
			n, d := f.Open(t, t.Name(), func(n int64) string {
				return checkpointBody(n, "cascade::depth-2, size::medium", shortTail, 1000)
			}, "cascade::depth-2", "size::medium")
			if r := f.Run(t, d, "allowed-agents", allowed); r.Code != 0 {
				t.Fatalf("the issue does not pass before the comment\n%s", r.String())
			}
			body := tc.body(t)
			id, d := f.Comment(t, n, agent, body)
			r := f.Run(t, d, "allowed-agents", allowed)
			r.Expect(t, 1, "fail")
			r.ExpectRules(t, tc.rule)
			line, col := tc.line(body), tc.col(body)
			want := actiontest.Violation{Rule: tc.rule, Severity: "error", KeyPath: fmt.Sprintf("comment#%d", id), Line: line, Col: col,
				Message: fmt.Sprintf("comment #%d: %s", id, tc.message)}
			if got := r.Violations(t)[0]; got != want {
				t.Errorf("violation\n%+v\nwant\n%+v", got, want)
			}
			logLine := fmt.Sprintf("issue#%d:%d:%d: comment #%d: %s [%s]", n, line, col, id, tc.message, tc.rule)
			if !strings.Contains(r.Stdout, logLine) {
				t.Errorf("the log lacks %q:\n%s", logLine, r.Stdout)
			}
			status := f.Status(t, n)
			for _, s := range []string{fmt.Sprintf("[comment %d](%s/%s/%s/issues/%d#issuecomment-%d) %d:%d", id, fakeforge.URL, f.Owner, f.Name, n, id, line, col), tc.shown} {
				if !strings.Contains(status.Body, s) {
					t.Errorf("the status comment lacks %q:\n%s", s, status.Body)
				}
			}
			if tc.rule == "agent-not-allowed" && !f.Issue(t, n).Has("permission::violation") {
				t.Errorf("permission::violation was not set\n%s", r.String())
			}
		})
	}
}
