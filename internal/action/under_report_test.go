package action_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// consumption-under-reported on a real server: an agent whose result
// comment holds more tokens than the consumption its footer reports gets a
// warning in the status comment and the warnings output, and the run
// passes; an honest agent's comment gets none.
func TestUnderReportedConsumption(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	n, _ := f.Open(t, "under-report", example(t, "healthy.md"), "cascade::depth-2", "size::medium", "phase::implementation")

	report := strings.Repeat("Reviewed the token bucket, its refill rate and the middleware that applies it to every route. ", 12)
	comment := func(inv string, consumed int) string {
		return "## 🔄 code-reviewer | phase:implementation | depth:1\n\n" + report + "\n\n" +
			fmt.Sprintf(`<!-- GNS_EVENT {"agent":"code-reviewer","invocation":%q,"event_type":"subagent_result","phase":"implementation","depth":1,`, inv) +
			fmt.Sprintf(`"budget":{"before":13800,"consumed":%d,"remaining":%d},"status":"done","verdict":"approve","files_changed":0,"key_stats":{"findings":0},"next_agent":""} -->`, consumed, 13800-consumed)
	}
	warnings := func(t *testing.T, out string) []map[string]any {
		t.Helper()
		var ws []map[string]any
		if err := json.Unmarshal([]byte(out), &ws); err != nil {
			t.Fatalf("the warnings output %q is not a JSON array: %v", out, err)
		}
		return ws
	}

	id, d := f.Comment(t, n, agent, comment("inv-under", 12))
	r := f.Run(t, d)
	r.Expect(t, 0, "pass")
	var flagged []map[string]any
	for _, w := range warnings(t, r.Outputs["warnings"]) {
		if w["rule"] == "consumption-under-reported" {
			flagged = append(flagged, w)
		}
	}
	if len(flagged) != 1 || flagged[0]["key_path"] != fmt.Sprintf("comment#%d", id) || flagged[0]["severity"] != "warning" ||
		!strings.Contains(fmt.Sprint(flagged[0]["message"]), `of agent "code-reviewer" holds `) ||
		!strings.Contains(fmt.Sprint(flagged[0]["message"]), "more than the 12 tokens its report added to budget.consumed") {
		t.Fatalf("warnings output: %s", r.Outputs["warnings"])
	}
	if r.Outputs["violations"] != "[]" {
		t.Errorf("violations output %q", r.Outputs["violations"])
	}
	status := f.Status(t, n)
	link := fmt.Sprintf("[comment %d](%s/%s/%s/issues/%d#issuecomment-%d)", id, fakeforge.URL, f.Owner, f.Name, n, id)
	if !strings.Contains(status.Body, "`consumption-under-reported`") || !strings.Contains(status.Body, link) || !strings.Contains(status.Body, "more than the 12 tokens") {
		t.Errorf("the status comment does not show the warning with the comment and both numbers:\n%s", status.Body)
	}

	// The honest agent's comment: the same text, a consumption above it.
	f.DeleteComment(t, id, agent)
	_, d = f.Comment(t, n, agent, comment("inv-honest", 4000))
	r = f.Run(t, d)
	r.Expect(t, 0, "pass")
	for _, w := range warnings(t, r.Outputs["warnings"]) {
		if w["rule"] == "consumption-under-reported" {
			t.Errorf("an honest report was flagged: %v", w)
		}
	}
	if got := f.Status(t, n); strings.Contains(got.Body, "consumption-under-reported") {
		t.Errorf("the status comment still warns:\n%s", got.Body)
	}
}
