package agentcomment_test

import (
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/agentcomment"
)

// TestParseLocatesProblems: every protocol problem points at the line and
// column of the comment where it is, and says what was expected.
func TestParseLocatesProblems(t *testing.T) {
	good := resultComment(t, "dev", "build", 1, nil)
	cases := []struct {
		name      string
		body      string
		line, col int
		msg       string
	}{
		{"header with spaces in a value", strings.Replace(good, "phase:build", "phase: build", 1), 1, 1,
			"does not match `## 🔄 {agent} | phase:{phase} | depth:{depth}`"},
		{"header after blank lines", "\n\n" + strings.Replace(good, " | depth:1", "", 1), 3, 1, "does not match"},
		{"no footer", "## 🔄 dev | phase:build | depth:1\n\nDone.\n", 3, 1, "the machine-readable footer is missing"},
		{"footer not at the end", good + "\n\nP.S. one more thing", 5, 6, "not a closed HTML comment at the very end"},
		{"footer JSON broken", "## 🔄 dev | phase:build | depth:1\n\nDone.\n<!-- GNS_EVENT {\"agent\": \"dev\",\n \"depth\": 1,, \"phase\": \"build\"} -->", 5, 13,
			"not valid JSON"},
		{"footer missing fields", "## 🔄 dev | phase:build | depth:1\n\n<!-- GNS_EVENT {\"agent\":\"dev\",\"event_type\":\"subagent_result\"} -->", 3, 16,
			"GNS_EVENT.invocation: required"},
		{"footer and header disagree", strings.Replace(good, `"depth":1`, `"depth":2`, 1), 5, 16, "GNS_EVENT.depth 2 differs from the header's depth 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, probs := agentcomment.Parse(tc.body)
			for _, p := range probs {
				if strings.Contains(p.Message, tc.msg) {
					if p.Line != tc.line || p.Col != tc.col {
						t.Errorf("%q at %d:%d, want %d:%d", p.Message, p.Line, p.Col, tc.line, tc.col)
					}
					return
				}
			}
			t.Errorf("no problem says %q; got %+v", tc.msg, probs)
		})
	}
	if c, probs := agentcomment.Parse(good); len(probs) != 0 || c.Agent != "dev" || c.Phase != "build" || c.Depth != 1 || c.Footer == nil {
		t.Errorf("a well-formed comment: %+v %+v", c, probs)
	}
}

// BenchmarkParseAgentComment reads one realistic agent result comment.
func BenchmarkParseAgentComment(b *testing.B) {
	body := resultComment(b, "lead-developer", "implementation", 1, map[string]any{
		"files_changed": []string{"internal/ratelimit/bucket.go", "internal/ratelimit/bucket_test.go"},
		"key_stats":     map[string]any{"tests_added": 14, "coverage_pct": 87.4},
	})
	body = strings.Replace(body, "Report of the work done", strings.Repeat("Implemented the middleware and its tests. ", 40), 1)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		agentcomment.Parse(body)
	}
}
