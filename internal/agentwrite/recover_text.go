package agentwrite

import (
	"fmt"
	"io"
	"strings"

	"github.com/gns-guard/gns-guard/internal/markdown"
)

// WriteText writes the proposal, where each field comes from, and what
// was done. It holds issue text: the caller fences it where a runner
// would obey commands in it.
func (res *RecoverResult) WriteText(w io.Writer, repo string) {
	var b strings.Builder
	n := res.Issue
	fmt.Fprintf(&b, "gns-guard: recover: issue #%d: the checkpoint is %s", n, res.Problem)
	if len(res.Findings) > 0 {
		fmt.Fprintf(&b, " (%s):\n", markdown.Plural(len(res.Findings), "problem"))
		for _, f := range res.Findings {
			fmt.Fprintln(&b, f.Format(fmt.Sprintf("issue#%d", n)))
		}
	} else {
		b.WriteString(".\n")
	}
	p := res.Proposal
	if res.Problem == "tampered" {
		fmt.Fprintf(&b, "\nProposed checkpoint: the state the guard accepted last, %s, with %s restored:\n\n",
			res.Baseline.Source, markdown.Plural(len(p.Fields), "field"))
		b.WriteString("```yaml\n" + p.YAML + "```\n\n")
		b.WriteString("Restored:\n\n| field | value | from |\n|---|---|---|\n")
	} else {
		fmt.Fprintf(&b, "\nProposed checkpoint, rebuilt from %s and %s since:\n\n", res.Baseline.Source, markdown.Plural(len(p.Since), "agent result"))
		b.WriteString("```yaml\n" + p.YAML + "```\n\n")
		b.WriteString("Where every field comes from:\n\n| field | value | from |\n|---|---|---|\n")
	}
	for _, f := range p.Fields {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", f.Key, markdown.Cell(f.Value, 80), markdown.Cell(f.Source, 0))
	}
	for _, note := range p.Notes {
		fmt.Fprintf(&b, "\nnote: %s\n", note)
	}
	if res.Applied {
		fmt.Fprintf(&b, "\nApplied: the body now holds this checkpoint (content version %d); every byte outside the block was kept.\n", res.ContentVersion)
	} else {
		fmt.Fprintf(&b, "\nPaste it in place of the checkpoint block (check the body with 'gns-guard check'), "+
			"or let a budget admin or repository admin run:\n  gns-guard recover --repo %s --issue %d --apply\n", repo, n)
	}
	_, _ = io.WriteString(w, b.String())
}
