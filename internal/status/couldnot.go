package status

import (
	"strings"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// CouldNotJudge is the status comment of a run a configuration error (exit
// 2) kept from judging: what went wrong and the fix, never "all clear", the
// record kept as it was. ok is false when the issue has no status comment;
// the run creates none.
func CouldNotJudge(issue int64, existing *issues.Comment, why string) (body string, ok bool) {
	if existing == nil {
		return "", false
	}
	var b strings.Builder
	b.WriteString(issues.StatusMarker(issue) + "\n")
	b.WriteString("## ⚠️ gns-guard: could not judge this issue\n\n")
	b.WriteString("The guard's last run could not judge this issue: its settings do not load (a configuration error). Until they do, " +
		"every run stops there: no verdict holds, and nothing the agents do is checked.\n\n")
	b.WriteString("**Why**: " + markdown.Cell(why, 1000) + "\n\n")
	b.WriteString("Fix the settings on the default branch (the file `.gitea/gns-guard.yml`, or the workflow's inputs). A pull " +
		"request that changes the file is judged with the settings' defaults while the default branch's file does not load, and its own " +
		"file must load. The next event on this issue judges it again.\n")
	b.WriteString("\n<sub>gns-guard keeps this comment up to date on every run; it holds the guard's ledger. Do not edit it: the " +
		"guard puts its text back, and a changed ledger fails the workflow.</sub>\n")
	if line := ledger.Line(existing.Body); line != "" {
		b.WriteString(line + "\n")
	}
	return b.String(), true
}
