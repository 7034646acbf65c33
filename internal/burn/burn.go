package burn

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// Point is one accepted step of an issue: its ordinal (1 for the first
// report), its time (zero: unknown), the agent, and consumed and remaining
// after it. A point with no agent is no agent's step: the start of the
// series, or a new phase's budget.
type Point struct {
	Step                int
	At                  time.Time
	Agent               string
	Consumed, Remaining int64
}

// Series is one issue's accepted steps, oldest first; Total 0 when unknown.
type Series struct {
	Issue  int64
	Title  string
	Total  int64
	Points []Point
}

// MaxPoints keeps the newest points.
const MaxPoints = 24

// MaxIssues keeps the largest consumers.
const MaxIssues = 8

// Report is an accepted result's footer agent, budget and time.
type Report struct {
	At                          time.Time
	Agent                       string
	Before, Consumed, Remaining int64
}

// FromReports numbers steps from 1, oldest first.
func FromReports(issue int64, title string, total int64, rs []Report) Series {
	s := Series{Issue: issue, Title: title, Total: total}
	for i, r := range rs {
		s.Points = append(s.Points, Point{Step: i + 1, At: r.At, Agent: r.Agent, Consumed: r.Consumed, Remaining: r.Remaining})
	}
	return s
}

// palette is the ordered line colours, each with its legend square.
var palette = []struct{ hex, square, name string }{
	{"#2563eb", "🟦", "blue"},
	{"#ea580c", "🟧", "orange"},
	{"#16a34a", "🟩", "green"},
	{"#dc2626", "🟥", "red"},
	{"#9333ea", "🟪", "purple"},
	{"#92400e", "🟫", "brown"},
	{"#ca8a04", "🟨", "yellow"},
	{"#111827", "⬛", "black"},
}

// directive holds no untrusted text.
func directive(n int) string {
	cols := make([]string, 0, n)
	for i := range min(n, len(palette)) {
		cols = append(cols, palette[i].hex)
	}
	return `%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "` + strings.Join(cols, ", ") + `"}}}}%%`
}

// IssueChart draws consumed (blue) and remaining (orange) tokens over the
// accepted steps of one issue as a Mermaid xychart in a ```mermaid block;
// "" when the series has fewer than 2 points. Only the newest MaxPoints
// points are drawn.
func IssueChart(s Series) string {
	pts := s.Points
	if len(pts) < 2 {
		return ""
	}
	if len(pts) > MaxPoints {
		pts = pts[len(pts)-MaxPoints:]
	}
	labels := make([]string, len(pts))
	consumed := make([]int64, len(pts))
	remaining := make([]int64, len(pts))
	top := s.Total
	for i, p := range pts {
		labels[i] = strconv.Itoa(p.Step) + " " + stepName(pts, i)
		consumed[i] = max(0, p.Consumed)
		remaining[i] = max(0, p.Remaining)
		top = max(top, consumed[i], remaining[i])
	}
	title := fmt.Sprintf("Issue #%d: consumed (blue) and remaining (orange) tokens", s.Issue)
	if t := Text(s.Title, 40); t != "" {
		title = fmt.Sprintf("#%d %s: consumed (blue), remaining (orange)", s.Issue, t)
	}
	var b strings.Builder
	writeChart(&b, 2, title, labels, top, consumed, remaining)
	return b.String()
}

// RepoChart draws each issue's consumed tokens over time as a Mermaid
// xychart, with a one-line legend of colours. Points without a time are
// left out; a line holds its last value between steps and 0 before. At most
// MaxIssues issues (the biggest) over MaxPoints moments; "" below 2
// moments.
func RepoChart(ss []Series) string {
	lines, times := timedLines(ss)
	slices.SortStableFunc(lines, func(a, b issueLine) int {
		return cmp.Or(cmp.Compare(b.consumed(), a.consumed()), cmp.Compare(a.s.Issue, b.s.Issue))
	})
	more := 0
	if len(lines) > MaxIssues {
		more = len(lines) - MaxIssues
		lines = lines[:MaxIssues]
	}
	times = moments(times)
	if len(times) < 2 {
		return ""
	}
	var top int64
	plots := make([][]int64, len(lines))
	for i, l := range lines {
		plots[i] = l.values(times)
		top = max(top, slices.Max(plots[i]))
	}
	var b strings.Builder
	writeChart(&b, len(lines), "Tokens consumed per issue (UTC)", timeLabels(times), top, plots...)
	b.WriteString("\n" + legend(lines, more) + "\n")
	return b.String()
}

// issueLine is a series and its timed points, oldest first.
type issueLine struct {
	s   Series
	pts []Point
}

// consumed is at the last point.
func (l issueLine) consumed() int64 { return l.pts[len(l.pts)-1].Consumed }

// values is the line's value at each of times: the consumed tokens of its
// last point at or before it (0 before its first, and for a negative count).
func (l issueLine) values(times []time.Time) []int64 {
	vals := make([]int64, len(times))
	j := 0
	var cur int64
	for i, t := range times {
		for j < len(l.pts) && !l.pts[j].At.After(t) {
			cur = max(0, l.pts[j].Consumed)
			j++
		}
		vals[i] = cur
	}
	return vals
}

// timedLines keeps the points of each series that have a time, oldest
// first, as a line per issue that has any, and returns the times of all of
// them (UTC).
func timedLines(ss []Series) ([]issueLine, []time.Time) {
	var lines []issueLine
	var times []time.Time
	for _, s := range ss {
		var pts []Point
		for _, p := range s.Points {
			if !p.At.IsZero() {
				pts = append(pts, p)
			}
		}
		if len(pts) == 0 {
			continue
		}
		slices.SortStableFunc(pts, func(a, b Point) int { return a.At.Compare(b.At) })
		lines = append(lines, issueLine{s, pts})
		for _, p := range pts {
			times = append(times, p.At.UTC())
		}
	}
	return lines, times
}

// moments sorts and dedups; past MaxPoints, spaces MaxPoints evenly first to
// last.
func moments(times []time.Time) []time.Time {
	slices.SortFunc(times, time.Time.Compare)
	times = slices.CompactFunc(times, time.Time.Equal)
	if len(times) <= MaxPoints {
		return times
	}
	first, last := times[0], times[len(times)-1]
	span := last.Sub(first)
	picked := make([]time.Time, MaxPoints)
	for i := range picked {
		picked[i] = first.Add(span * time.Duration(i) / time.Duration(MaxPoints-1))
	}
	picked[MaxPoints-1] = last
	return picked
}

// timeLabels add the day when the span crosses one.
func timeLabels(times []time.Time) []string {
	layout := "15:04"
	if times[0].Format("2006-01-02") != times[len(times)-1].Format("2006-01-02") {
		layout = "01-02 15:04"
	}
	labels := make([]string, len(times))
	for i, t := range times {
		labels[i] = t.Format(layout)
	}
	return labels
}

// legend names line colours and the issues not drawn.
func legend(lines []issueLine, more int) string {
	names := make([]string, len(lines))
	for i, l := range lines {
		names[i] = fmt.Sprintf("%s &#35;%d %s", palette[i].square, l.s.Issue, inert(markdown.Cell(l.s.Title, 40)))
	}
	text := strings.Join(names, " · ")
	if more > 0 {
		text += fmt.Sprintf(" · %d more not drawn", more)
	}
	return text
}

// writeChart writes a Mermaid xychart of lines in a ```mermaid block, in
// the first colours of the palette, over an x axis of labels and a y axis
// from 0 to top rounded up (niceTop). The title and labels are already inert.
func writeChart(b *strings.Builder, colours int, title string, labels []string, top int64, lines ...[]int64) {
	b.WriteString("```mermaid\n")
	b.WriteString(directive(colours) + "\n")
	b.WriteString("xychart-beta\n")
	b.WriteString("    title \"" + title + "\"\n")
	fmt.Fprintf(b, "    x-axis %s\n", categories(labels))
	fmt.Fprintf(b, "    y-axis \"tokens\" 0 --> %d\n", niceTop(top))
	for _, l := range lines {
		fmt.Fprintf(b, "    line %s\n", numbers(l))
	}
	b.WriteString("```\n")
}

// AgentTable is a Markdown table of the tokens each agent spent, biggest
// first: the rises of consumed its steps brought, its steps and its share.
// A point with no agent only moves the baseline; what was consumed before
// the first point is a row of its own. A fall counts as 0. "" when no agent
// spent anything known.
func AgentTable(s Series) string {
	type row struct {
		agent  string
		steps  int
		tokens int64
	}
	var rows []*row
	byAgent := map[string]*row{}
	var earlier, sum int64
	prev := int64(0)
	for i, p := range s.Points {
		d := max(0, p.Consumed-prev)
		prev = p.Consumed
		if i == 0 && (p.Step > 1 || p.Agent == "") {
			earlier = max(0, p.Consumed)
			continue
		}
		if p.Agent == "" {
			continue
		}
		r := byAgent[p.Agent]
		if r == nil {
			r = &row{agent: p.Agent}
			byAgent[p.Agent] = r
			rows = append(rows, r)
		}
		r.steps++
		r.tokens += d
		sum += d
	}
	if len(rows) == 0 {
		return ""
	}
	slices.SortStableFunc(rows, func(a, b *row) int {
		if a.tokens != b.tokens {
			if a.tokens > b.tokens {
				return -1
			}
			return 1
		}
		return strings.Compare(a.agent, b.agent)
	})
	var b strings.Builder
	b.WriteString("| Agent | Steps | Tokens | Share |\n|---|--:|--:|--:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", markdown.Cell(r.agent, 40), r.steps, tokens.Format(r.tokens), share(r.tokens, sum))
	}
	if earlier > 0 {
		fmt.Fprintf(&b, "| (before step %d) | – | %s | – |\n", s.Points[0].Step+1, tokens.Format(earlier))
	}
	return b.String()
}

// stepName names the i-th drawn point on the x axis: its agent, or what a
// point with no agent is. Only a reset of the budget (consumed down or
// remaining up) is a new budget; a point that moved neither is a prune
// that only archived (a ledger written before such points were left out).
func stepName(pts []Point, i int) string {
	p := pts[i]
	switch {
	case p.Agent != "":
		return Text(p.Agent, 16)
	case i == 0:
		return "start"
	case p.Consumed < pts[i-1].Consumed || p.Remaining > pts[i-1].Remaining:
		return "new budget"
	}
	return "archived"
}

// share is part of whole as a whole percentage.
func share(part, whole int64) string {
	if whole <= 0 {
		return "–"
	}
	return strconv.FormatInt((part*100+whole/2)/whole, 10) + "%"
}

// Text reduces untrusted text to what a chart holds inertly: letters,
// digits, spaces and - _ . , : / + ( ) ' ? !, at most most characters (0:
// no limit). Anything else becomes a space, so the text cannot close a
// string, fence or chart, nor start a directive.
func Text(s string, most int) string {
	var b strings.Builder
	space := false
	for _, c := range s {
		ok := unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune("-_.,:/+()'?!", c)
		if !ok {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(c)
	}
	r := []rune(b.String())
	if most > 0 && len(r) > most {
		r = append(r[:most-1], '…')
	}
	return string(r)
}

// categories quotes labels for a Mermaid x-axis; they are already inert.
func categories(labels []string) string {
	q := make([]string, len(labels))
	for i, l := range labels {
		q[i] = `"` + l + `"`
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// numbers writes values as a Mermaid data list.
func numbers(vs []int64) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.FormatInt(v, 10)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// niceTop rounds the top of the y axis up to 1, 2 or 5 times a power of ten,
// so the axis reads well; at least 10.
func niceTop(v int64) int64 {
	if v < 10 {
		return 10
	}
	for p := int64(10); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if m*p >= v {
				return m * p
			}
		}
		if p > (1<<62)/10 {
			return v
		}
	}
}

// inert keeps a legend's text from referencing issues: Gitea links "#12"
// (escaped with a backslash or not) and "!12" in a body to issue or pull
// request 12 and records the reference on its timeline, every time the
// text is written anew.
func inert(text string) string {
	text = hashRef.ReplaceAllString(text, "${1}&#35;${2}")
	return bangRef.ReplaceAllString(text, "&#33;${1}")
}

// hashRef and bangRef start "#12" (not "&#35;") and "!12".
var (
	hashRef = regexp.MustCompile(`(^|[^&])\\?#([0-9])`)
	bangRef = regexp.MustCompile(`!([0-9])`)
)
