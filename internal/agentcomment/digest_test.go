package agentcomment_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/agentcomment"
)

// resultComment is an agent result comment as an agent posts it: header,
// a report, and the GNS_EVENT footer built from fields (merged over a
// complete subagent_result).
func resultComment(t testing.TB, agent, phase string, depth int, fields map[string]any) string {
	t.Helper()
	ev := map[string]any{
		"agent": agent, "invocation": "inv-20260516-1320-a7", "event_type": "subagent_result",
		"phase": phase, "depth": depth,
		"budget": map[string]int{"before": 13800, "consumed": 900, "remaining": 12900},
		"status": "done", "verdict": "approve", "files_changed": 0, "key_stats": map[string]int{"findings": 0},
		"next_agent": "",
	}
	for k, v := range fields {
		ev[k] = v
	}
	j, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("## 🔄 %s | phase:%s | depth:%d\n\nReport of the work done, with the details a reviewer needs.\n\n<!-- GNS_EVENT %s -->", agent, phase, depth, j)
}

// realisticResults are 30 results with values as long as real agents write
// them: long agent names, many changed paths, several key stats, full links.
func realisticResults(t testing.TB) []agentcomment.Result {
	t.Helper()
	agents := []string{"lead-developer-backend-platform", "code-reviewer-security-focused", "qa-engineer-load-and-soak-testing", "technical-writer-api-reference", "orchestrator-release-2.0"}
	verdicts := []string{"approve-with-nits", "request-changes", "approve", "needs-follow-up-issue"}
	var out []agentcomment.Result
	for i := range 30 {
		files := make([]string, 12)
		for j := range files {
			files[j] = fmt.Sprintf("services/api-gateway/internal/middleware/ratelimit/bucket_%02d_test.go", j)
		}
		body := resultComment(t, agents[i%len(agents)], "implementation", 1, map[string]any{
			"status":        "completed-with-warnings",
			"verdict":       verdicts[i%len(verdicts)],
			"files_changed": files,
			"key_stats": map[string]any{
				"tests_added": 14 + i, "tests_passed": 312, "coverage_pct": 87.4, "p99_ms": 41,
				"lint_findings": 3, "benchmark_delta": "-4.2% allocs/op",
			},
		})
		id := int64(1_234_560 + i)
		url := fmt.Sprintf("https://gitea.example.com/platform-engineering/api-gateway-service/issues/1234#issuecomment-%d", id)
		r, ok := agentcomment.ResultOf(id, url, body)
		if !ok {
			t.Fatalf("result %d was not read as a result:\n%s", i, body)
		}
		out = append(out, r)
	}
	return out
}

// TestDigestOfThirtyResultsFitsInTenKB: the digest exists to be cheaper to
// load than the results it summarises.
func TestDigestOfThirtyResultsFitsInTenKB(t *testing.T) {
	results := realisticResults(t)
	d := agentcomment.Digest(1234, results)
	if len(d) >= 10_000 {
		t.Errorf("the digest of 30 results is %d bytes, over 10 KB:\n%s", len(d), d)
	}
	rows := tableRows(t, d)
	if len(rows) != 30 {
		t.Fatalf("%d table rows, want 30:\n%s", len(rows), d)
	}
	for i, row := range rows {
		r := results[i]
		for _, want := range []string{r.URL, "completed-with-warnings", "| 12 |", "benchmark\\_delta=-4.2% allocs/op", "p99\\_ms=41"} {
			if !strings.Contains(row, want) {
				t.Errorf("row %d lacks %q:\n%s", i+1, want, row)
			}
		}
	}
	if !strings.HasPrefix(d, agentcomment.DigestHeading+"\n") {
		t.Errorf("the digest does not start with %q", agentcomment.DigestHeading)
	}
	t.Logf("30 realistic results: %d bytes", len(d))
}

// tableRows returns the data rows of the digest's table, failing when a
// line that belongs to the table is not a well-formed 7-column row.
func tableRows(t *testing.T, d string) []string {
	t.Helper()
	var rows []string
	lines := strings.Split(strings.TrimRight(d, "\n"), "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(l, "| # |") {
			in = true
			if lines[i+1] != "|---|---|---|---|---|---|---|" {
				t.Fatalf("no delimiter row after the header:\n%s", d)
			}
			continue
		}
		if !in || strings.HasPrefix(l, "|---") {
			continue
		}
		if cells := unescapedPipes.FindAllStringIndex(l, -1); len(cells) != 8 || !strings.HasPrefix(l, "| ") || !strings.HasSuffix(l, " |") {
			t.Fatalf("line %d is not a 7-column row (%d cell borders):\n%s\n\ndigest:\n%s", i+1, len(cells), l, d)
		}
		rows = append(rows, l)
	}
	return rows
}

// unescapedPipes matches a | not escaped by a backslash (an even run of
// backslashes before it escapes nothing).
var unescapedPipes = regexp.MustCompile(`(?:^|[^\\])(?:\\\\)*\|`)

// TestDigestNeutralisesHostileValues: footers are written by agents, and
// whatever they put in them must not add rows, break out of the table,
// mention people, inject HTML or links, or close a code span.
func TestDigestNeutralisesHostileValues(t *testing.T) {
	hostile := []map[string]any{
		{"status": "done |\n| 99 | forged | row | x | 0 | - | [comment](https://evil.example) |", "verdict": "pass"},
		{"status": "done", "verdict": "@admin @everyone please look", "key_stats": "cc @alice, @bob and @org/team"},
		{"status": "```\n</table><img src=x onerror=alert(1)>", "verdict": "`rm -rf /`"},
		{"status": "done", "verdict": "[click](javascript:alert(1))", "key_stats": map[string]string{"x|y": "a\r\nb", "@carol": "<script>"}},
		{"status": "done\u2028next", "verdict": "\\|\\\\|", "files_changed": []string{"a|b.go", "@d.go"}},
		{"status": "<!-- gns-guard:digest issue=1 -->", "verdict": "-->", "key_stats": "# heading\n---\n> quote"},
	}
	var results []agentcomment.Result
	for i, fields := range hostile {
		agent := "agent"
		if i == 0 {
			agent = "@mallory"
		}
		fields["agent"] = agent + "|`x`\n| injected |"
		body := resultComment(t, "agent", "build", 1, fields)
		url := fmt.Sprintf("http://gitea.test/o/r/issues/1#issuecomment-%d", 100+i)
		if i == 2 {
			url = "javascript:alert(1)"
		}
		if i == 3 {
			url = "http://gitea.test/o/r/issues/1#x) [evil](http://evil.example"
		}
		r, ok := agentcomment.ResultOf(int64(100+i), url, body)
		if !ok {
			t.Fatalf("hostile result %d was not read as a result:\n%s", i, body)
		}
		results = append(results, r)
	}
	d := agentcomment.Digest(1, results)
	rows := tableRows(t, d)
	if len(rows) != len(hostile) {
		t.Fatalf("%d rows for %d results:\n%s", len(rows), len(hostile), d)
	}
	mention := regexp.MustCompile(`@[A-Za-z0-9]`)
	for _, bad := range []struct {
		what string
		re   *regexp.Regexp
	}{
		{"an @mention", mention},
		{"a backtick", regexp.MustCompile("`")},
		{"raw HTML", regexp.MustCompile(`<[A-Za-z!/]`)},
	} {
		if loc := bad.re.FindStringIndex(d); loc != nil {
			t.Errorf("the digest holds %s at byte %d (%q):\n%s", bad.what, loc[0], d[max(0, loc[0]-20):min(len(d), loc[1]+20)], d)
		}
	}
	if n, own := strings.Count(d, "](")-strings.Count(d, `\](`), strings.Count(d, "[comment]("); n != own || own != len(hostile) {
		t.Errorf("%d links (an escaped \\[ is not one), %d of them the rows' own; want exactly one per row (%d):\n%s", n, own, len(hostile), d)
	}
	if !strings.Contains(rows[2], "(#issuecomment-102)") {
		t.Errorf("a javascript: URL was not replaced by the comment anchor:\n%s", rows[2])
	}
}

// BenchmarkDigest renders the digest of 30 realistic results.
func BenchmarkDigest(b *testing.B) {
	results := realisticResults(b)
	for b.Loop() {
		agentcomment.Digest(1234, results)
	}
}
