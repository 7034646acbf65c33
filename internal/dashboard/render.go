package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/gns-guard/gns-guard/internal/burn"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// Marker marks the dashboard, only on the guard's user's issue.
const Marker = "<!-- gns-guard:dashboard -->"

// Title is a new dashboard's; a person may rename it.
const Title = "gns-guard dashboard"

// MaxBody drops further rows, and the body counts them.
const MaxBody = 60000

// JSON renders the rows as a JSON array, indented.
func JSON(r *Result) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	rows := make([]Row, len(r.Rows))
	for i, row := range r.Rows {
		// Lists are [] when empty, never null.
		row.Rules, row.Warnings, row.Findings = nonNil(row.Rules), nonNil(row.Warnings), nonNil(row.Findings)
		rows[i] = row
	}
	if err := enc.Encode(rows); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Text renders the rows as an aligned table, one line an issue, then the
// findings of the failing ones as issue#N:line:col: message [rule]. Issue
// text is reduced to one printable line.
func Text(r *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", plain(r.Repo, 0), summary(r))
	for _, l := range append(workflowLines(r), budgetLines(r)...) {
		b.WriteString(l + "\n")
	}
	if len(r.Rows) == 0 {
		return b.String()
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ISSUE\tVERDICT\tPHASE\tDEPTH\tBUDGET USED\tREMAINING\tLIFETIME\tLAST AGENT\tNEXT AGENT\tLAST ACTIVITY\tNOTES\tTITLE")
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "#%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", row.Number, row.Verdict, orDash(plain(row.Phase, 30)),
			depthText(row), usedText(row), remainingText(row), lifetimeText(row), orDash(plain(row.LastAgent, 30)), orDash(plain(row.NextAgent, 30)),
			row.UpdatedAt.Format("2006-01-02 15:04"), orDash(strings.Join(notes(row), ", ")), plain(row.Title, 60))
	}
	tw.Flush()
	for _, row := range r.Rows {
		for _, f := range row.Findings {
			if f.IsError() {
				b.WriteString(plain(f.Format(fmt.Sprintf("issue#%d", row.Number)), 0) + "\n")
			}
		}
	}
	return b.String() + gateText(r)
}

// Markdown renders the rows as a Markdown table, safe to publish: issue
// text cannot break the table, a fence, mention people or reference
// issues.
func Markdown(r *Result) string {
	s, _ := markdownTable(r, 0)
	return s + gateMarkdown(r)
}

// markdownTable fits most bytes (0: no limit) and counts rows left out.
func markdownTable(r *Result, most int) (string, int) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", summary(r))
	for _, l := range workflowLines(r) {
		b.WriteString("**" + l + "**\n\n")
	}
	for _, l := range budgetLines(r) {
		b.WriteString(Cell(l, 0) + "\n\n")
	}
	if len(r.Rows) == 0 {
		return b.String(), 0
	}
	b.WriteString("| Issue | Title | Phase | Depth | Budget used | Remaining | Lifetime spend | Verdict | Last agent | Next agent | " +
		"Last activity | Stale |\n")
	b.WriteString("|---|---|---|--:|--:|--:|--:|---|---|---|---|---|\n")
	for i, row := range r.Rows {
		verdict := "✅ pass"
		if row.Verdict == "fail" {
			rules := make([]string, len(row.Rules))
			for k, rule := range row.Rules {
				rules[k] = "`" + Cell(rule, 40) + "`"
			}
			verdict = "❌ fail: " + strings.Join(rules, ", ")
		}
		used := usedText(row)
		switch {
		case row.Waiting && row.BudgetWarning == "exhausted":
			used += " ⛔ exhausted: " + waitText
		case row.Waiting:
			used += " ⛔ " + waitText
		case row.BudgetWarning == "exhausted":
			used += " ⛔ exhausted"
		case row.BudgetWarning != "":
			used += " ⚠️ " + row.BudgetWarning
		}
		stale := "no"
		if row.Stale {
			stale = "⏸ stale since " + row.Progress.Format("2006-01-02")
		}
		if u := row.Unjudged; u != nil {
			verdict += fmt.Sprintf(" ⚠️ unjudged: body v%d, ledger v%d, since %s", u.Current, u.Judged, u.Since.Format("2006-01-02 15:04"))
		}
		line := fmt.Sprintf("| `#%d` | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", row.Number, Cell(row.Title, 60), Cell(row.Phase, 30),
			depthText(row), used, remainingText(row), lifetimeText(row), verdict, Cell(row.LastAgent, 30), Cell(row.NextAgent, 30),
			row.UpdatedAt.Format("2006-01-02 15:04"), stale)
		if most > 0 && b.Len()+len(line) > most {
			left := len(r.Rows) - i
			fmt.Fprintf(&b, "\n%d more issues are not shown here (the body would be too long): `gns-guard status` lists them all.\n", left)
			return b.String(), left
		}
		b.WriteString(line)
	}
	return b.String(), 0
}

// Body is the marker, the table, the gate's trees and the burn chart.
func Body(r *Result, version string) string {
	var b strings.Builder
	b.WriteString(Marker + "\n")
	b.WriteString("## gns-guard dashboard\n\n")
	chart := burn.RepoChart(r.Series())
	trees := gateMarkdown(r)
	if len(trees) > MaxBody/3 {
		trees = "\nThe gate's invocations are not shown here (the body would be too long): `gns-guard status` lists them.\n"
	}
	table, _ := markdownTable(r, MaxBody-len(chart)-len(trees)-1000)
	b.WriteString(table)
	b.WriteString(trees)
	b.WriteString("\n### Budget burn\n\n")
	if chart == "" {
		b.WriteString("Not enough accepted agent reports with times to draw a chart yet.\n")
	} else {
		b.WriteString(chart)
	}
	stale := r.StaleAfter.String()
	if r.StaleAfter%(24*time.Hour) == 0 && r.StaleAfter > 0 {
		stale = strconv.FormatInt(int64(r.StaleAfter/(24*time.Hour)), 10) + "d"
	}
	fmt.Fprintf(&b, "\n---\nKept by gns-guard %s, edited in place on every run; judged as the guard judges each issue, at %s (UTC). "+
		"Stale: no progress accepted for %s.\n",
		Cell(version, 60), r.At.Format("2006-01-02 15:04"), stale)
	return b.String()
}

// budgetLines are none without repository-budget.
func budgetLines(r *Result) []string {
	rb := r.Budget
	if rb == nil {
		return nil
	}
	line := "Repository budget: " + guard.BurnLine(rb.Granted, rb.Limit, rb.Window)
	switch {
	case rb.Problem != "":
		line += "; summed from the open issues' records, since " + rb.Problem
	case rb.Summed:
		line += ", summed from the open issues' records (issues closed in the window are not counted; the action's dashboard reads the " +
			"grant list " + ledger.GrantsName + ")"
	}
	if rb.Granted > rb.Limit {
		line += ": over the cap"
	}
	return []string{line}
}

// summary is the one-line count of the rows.
func summary(r *Result) string {
	fail, stale, waiting := 0, 0, 0
	for _, row := range r.Rows {
		if row.Verdict == "fail" {
			fail++
		}
		if row.Stale {
			stale++
		}
		if row.Waiting {
			waiting++
		}
	}
	return fmt.Sprintf("%s (of %d open): %d pass, %d fail, %d stale, %d waiting for a person",
		OpenGoverned(len(r.Rows)), r.Open, len(r.Rows)-fail, fail, stale, waiting)
}

// OpenGoverned reads "1 open governed issue", "5 open governed issues".
func OpenGoverned(n int) string {
	if n == 1 {
		return "1 open governed issue"
	}
	return fmt.Sprintf("%d open governed issues", n)
}

// notes are the text form's remarks on a row.
func notes(row Row) []string {
	var out []string
	out = append(out, row.Rules...)
	switch {
	case row.BudgetWarning == "exhausted":
		out = append(out, "budget exhausted")
	case row.BudgetWarning != "":
		out = append(out, row.BudgetWarning+" of budget used")
	}
	if row.Waiting {
		out = append(out, waitText)
	}
	if row.Stale {
		out = append(out, "stale since "+row.Progress.Format("2006-01-02"))
	}
	if u := row.Unjudged; u != nil {
		out = append(out, fmt.Sprintf("unjudged: body v%d, ledger v%d, unchanged since %s", u.Current, u.Judged, u.Since.Format("2006-01-02 15:04")))
	}
	return out
}

func depthText(row Row) string {
	if row.Depth == nil {
		return "–"
	}
	limit := "?"
	if row.MaxDepth != nil {
		limit = strconv.Itoa(*row.MaxDepth)
		if *row.MaxDepth < 0 {
			limit = "n"
		}
	}
	return fmt.Sprintf("%d/%s", *row.Depth, limit)
}

func usedText(row Row) string {
	if row.Budget == nil {
		return "–"
	}
	s := tokens.Format(row.Budget.Consumed) + " of " + tokens.Format(row.Budget.Total)
	if row.UsedPercent != nil {
		s += fmt.Sprintf(" (%d%%)", *row.UsedPercent)
	}
	if m := row.Metered; m != nil {
		s += " · metered " + tokens.Format(m.Tokens)
		if m.Cost > 0 {
			s += fmt.Sprintf(" ($%.2f)", float64(m.Cost)/1e6)
		}
	}
	return s
}

// lifetimeText reads "16,681 (16,681 before this phase)".
func lifetimeText(row Row) string {
	if row.Budget == nil {
		return "–"
	}
	s := tokens.Format(row.Budget.Lifetime)
	if row.Budget.Earlier > 0 {
		s += " (" + tokens.Format(row.Budget.Earlier) + " before this phase)"
	}
	return s
}

func remainingText(row Row) string {
	if row.Budget == nil {
		return "–"
	}
	return tokens.Format(row.Budget.Remaining)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// plain makes untrusted text one printable line of at most most (0: no
// limit).
func plain(s string, most int) string {
	r := []rune(strings.Map(func(c rune) rune {
		if unicode.IsControl(c) || c == '\u2028' || c == '\u2029' {
			return ' '
		}
		return c
	}, s))
	if most > 0 && len(r) > most {
		r = append(r[:most-1], '…')
	}
	return string(r)
}

// cellEscapes keep what markdown.Cell leaves from referencing issues or
// pull requests (Gitea links "#12", "!12" and issue URLs in a body to the
// issue, and records the reference on it).
var cellEscapes = strings.NewReplacer(`\#`, "&#35;", "!", "&#33;", "://", ":&#47;&#47;", "www.", "www&#46;")

// Cell renders untrusted text for a table cell of the dashboard: one line,
// at most most characters, no table, fence, HTML, mention or issue
// reference syntax (markdown.Cell, and no #N, !N or URLs).
func Cell(s string, most int) string {
	return cellEscapes.Replace(markdown.Cell(s, most))
}
