package burn

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/golden"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

const rerun = "go test ./internal/burn -update"

var t0 = time.Date(2026, 5, 16, 9, 0, 0, 0, time.UTC)

// issueSeries is a small issue: a planner, a developer twice, a reviewer.
func issueSeries() Series {
	return FromReports(42, "Rate limiter for the public API", 20000, []Report{
		{At: t0, Agent: "planner", Before: 20000, Consumed: 1500, Remaining: 18500},
		{At: t0.Add(time.Hour), Agent: "lead-developer", Before: 18500, Consumed: 6000, Remaining: 14000},
		{At: t0.Add(2 * time.Hour), Agent: "code-reviewer", Before: 14000, Consumed: 7200, Remaining: 12800},
		{At: t0.Add(3 * time.Hour), Agent: "lead-developer", Before: 12800, Consumed: 11000, Remaining: 9000},
	})
}

func TestIssueChartGolden(t *testing.T) {
	golden.Check(t, filepath.Join("testdata", "issue.golden"), IssueChart(issueSeries()), rerun)
}

func TestIssueChartNeedsTwoPoints(t *testing.T) {
	s := issueSeries()
	s.Points = s.Points[:1]
	if got := IssueChart(s); got != "" {
		t.Errorf("one point drew a chart:\n%s", got)
	}
	if got := IssueChart(Series{}); got != "" {
		t.Errorf("no points drew a chart:\n%s", got)
	}
}

func TestRepoChartGolden(t *testing.T) {
	a := issueSeries()
	b := FromReports(43, "Docs: the | pipe & <b>bold</b> title", 10000, []Report{
		{At: t0.Add(30 * time.Minute), Agent: "writer", Consumed: 2000, Remaining: 8000},
		{At: t0.Add(150 * time.Minute), Agent: "writer", Consumed: 5000, Remaining: 5000},
	})
	undated := FromReports(44, "no times", 1000, []Report{{Agent: "x", Consumed: 10}, {Agent: "x", Consumed: 20}})
	golden.Check(t, filepath.Join("testdata", "repo.golden"), RepoChart([]Series{b, a, undated}), rerun)
}

func TestRepoChartBoundsIssuesAndMoments(t *testing.T) {
	var ss []Series
	for i := range 12 {
		var rs []Report
		for j := range 10 {
			rs = append(rs, Report{At: t0.Add(time.Duration(i*10+j) * time.Minute), Agent: "a", Consumed: int64((i + 1) * (j + 1))})
		}
		ss = append(ss, FromReports(int64(i+1), "", 1000, rs))
	}
	got := RepoChart(ss)
	if n := strings.Count(got, "    line "); n != MaxIssues {
		t.Errorf("%d lines drawn, want %d", n, MaxIssues)
	}
	if !strings.Contains(got, "4 more not drawn") {
		t.Errorf("the legend does not say how many issues are left out:\n%s", got)
	}
	axis := got[strings.Index(got, "x-axis"):]
	axis = axis[:strings.Index(axis, "\n")]
	if n := strings.Count(axis, `"`) / 2; n != MaxPoints {
		t.Errorf("%d moments on the x axis, want %d: %s", n, MaxPoints, axis)
	}
	if !strings.Contains(got, "&#35;12 ") || strings.Contains(got, "&#35;1 ") {
		t.Errorf("the issues that consumed the most are not the ones drawn:\n%s", got)
	}
}

func TestAgentTableGolden(t *testing.T) {
	golden.Check(t, filepath.Join("testdata", "agents.golden"), AgentTable(issueSeries()), rerun)
}

func TestAgentTableStartsAndResets(t *testing.T) {
	s := Series{Issue: 1, Total: 10000, Points: []Point{
		{Step: 1, Consumed: 3000, Remaining: 7000},               // the start: spent before the series
		{Step: 2, Agent: "dev", Consumed: 4000, Remaining: 6000}, // +1000
		{Step: 3, Consumed: 0, Remaining: 3000},                  // a new budget
		{Step: 4, Agent: "dev", Consumed: 500, Remaining: 2500},  // +500
		{Step: 5, Agent: "qa|x", Consumed: 800, Remaining: 2200}, // +300
	}}
	got := AgentTable(s)
	for _, want := range []string{"| dev | 2 | 1,500 | 83% |", `| qa\|x | 1 | 300 | 17% |`, "| (before step 2) | – | 3,000 | – |"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if AgentTable(Series{}) != "" {
		t.Error("an empty series made a table")
	}
}

// Only a reset of the budget is called a new budget on the x axis: a point
// with no agent that moved neither figure (a prune that only archived, in
// a ledger written before such points were left out) is not.
func TestChartCallsOnlyAResetANewBudget(t *testing.T) {
	s := Series{Issue: 1, Total: 10000, Points: []Point{
		{Step: 1, Consumed: 3000, Remaining: 7000},
		{Step: 2, Agent: "dev", Consumed: 8500, Remaining: 1500},
		{Step: 3, Consumed: 8500, Remaining: 1500}, // archived only
		{Step: 4, Consumed: 0, Remaining: 750},     // a new phase
	}}
	got := IssueChart(s)
	if !strings.Contains(got, `x-axis ["1 start", "2 dev", "3 archived", "4 new budget"]`) {
		t.Errorf("the x axis names the steps wrongly:\n%s", got)
	}
}

// TestChartsKeepUntrustedTextInert puts every way out of a fence, a quoted
// string or the chart into a title and an agent name.
func TestChartsKeepUntrustedTextInert(t *testing.T) {
	evil := "x\"]\n```\n%%{init: {\"theme\":\"dark\"}}%%\nline [1]\n<img src=x onerror=alert(1)>&#quot;; click A call evil()`"
	s := FromReports(7, evil, 100, []Report{
		{At: t0, Agent: evil, Consumed: 10, Remaining: 90},
		{At: t0.Add(time.Minute), Agent: evil, Consumed: 20, Remaining: 80},
	})
	for name, out := range map[string]string{"issue": IssueChart(s), "repo": RepoChart([]Series{s})} {
		body := strings.TrimPrefix(out, "```mermaid\n")
		end := strings.Index(body, "```\n")
		if end < 0 {
			t.Fatalf("%s: no closing fence:\n%s", name, out)
		}
		chart := body[:end]
		if strings.Count(out, "```") != 2 {
			t.Errorf("%s: a fence more than the block's own:\n%s", name, out)
		}
		lines := strings.Split(strings.TrimSpace(chart), "\n")
		if strings.Count(chart, "%%") != 2 || !strings.HasPrefix(lines[0], "%%{init: ") {
			t.Errorf("%s: a directive other than the chart's own:\n%s", name, chart)
		}
		for _, l := range lines[1:] {
			l = strings.TrimSpace(l)
			ok := l == "xychart-beta" || strings.HasPrefix(l, "title \"") || strings.HasPrefix(l, "x-axis [") || strings.HasPrefix(l, "y-axis \"tokens\"") || strings.HasPrefix(l, "line [")
			if !ok {
				t.Errorf("%s: a line the chart did not write: %q", name, l)
			}
			if strings.Count(l, `"`)%2 != 0 || strings.ContainsAny(strings.Replace(l, " --> ", " ", 1), "<>&;`{}") {
				t.Errorf("%s: untrusted text left a string or holds markup: %q", name, l)
			}
		}
		if strings.Count(lines[len(lines)-1], "line [") != 1 {
			t.Errorf("%s: the last line is not the chart's: %q", name, lines[len(lines)-1])
		}
	}
}

func TestTextAndNumbers(t *testing.T) {
	if got := Text("  a\"b`c%%d\n{e}  ", 0); got != "a b c d e" {
		t.Errorf("Text = %q", got)
	}
	if got := Text("abcdefgh", 4); got != "abc…" {
		t.Errorf("Text cut = %q", got)
	}
	for v, want := range map[int64]int64{0: 10, 7: 10, 11: 20, 20000: 20000, 20001: 50000, 123456: 200000} {
		if got := niceTop(v); got != want {
			t.Errorf("niceTop(%d) = %d, want %d", v, got, want)
		}
	}
	if got := tokens.Format(-1234567); got != "-1,234,567" {
		t.Errorf("Thousands = %q", got)
	}
}

// A legend names issues without referencing them: Gitea would record a
// reference on every issue the dashboard names, each time it is written.
func TestRepoChartLegendReferencesNoIssue(t *testing.T) {
	ss := []Series{{Issue: 7, Title: `see #12, \#13 and !14`, Total: 100, Points: []Point{
		{Step: 1, At: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC), Consumed: 10, Remaining: 90},
		{Step: 2, At: time.Date(2026, 5, 1, 9, 5, 0, 0, time.UTC), Agent: "a", Consumed: 30, Remaining: 70},
	}}}
	got := RepoChart(ss)
	legend := got[strings.LastIndex(got, "```"):]
	for _, ref := range []string{"#7", "#12", "#13", "!14"} {
		if strings.Contains(legend, ref) && !strings.Contains(legend, "&"+ref) {
			t.Errorf("the legend references %s: %s", ref, legend)
		}
	}
	if !strings.Contains(legend, "&#35;7") || !strings.Contains(legend, "&#35;12") || !strings.Contains(legend, "&#33;14") {
		t.Errorf("the legend lost the numbers: %s", legend)
	}
}
