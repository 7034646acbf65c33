package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/meterclient"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// Gate is the invocations the gate opened on an issue, as the meter
// answers them (docs/gate.md).
type Gate struct {
	// Invocations are oldest first; Parent links a sub-agent to its own.
	Invocations []meterclient.Branch `json:"invocations"`
	// Error says why the meter could not be read.
	Error string `json:"error,omitempty"`
}

// gateTitle heads the trees in the text and Markdown forms.
const gateTitle = "The gate's invocations, and what the meter charged each"

// FillTrees asks the meter for each row's invocation tree, in the gated
// posture only. A row the meter does not answer holds why; an
// unreachable meter is asked once.
func FillTrees(ctx context.Context, cfg config.Config, token, repo string, res *Result) {
	if !cfg.Gated() || cfg.MeterURL == "" {
		return
	}
	c := meterclient.Client{Base: cfg.MeterURL, Token: token}
	var unreachable string
	for i := range res.Rows {
		g := &Gate{Invocations: []meterclient.Branch{}, Error: unreachable}
		res.Rows[i].Gate = g
		if unreachable != "" {
			continue
		}
		tr, err := c.Tree(ctx, repo, res.Rows[i].Number)
		var ue *url.Error
		switch {
		case errors.As(err, &ue):
			unreachable = err.Error()
			g.Error = unreachable
		case err != nil:
			g.Error = err.Error()
		case tr.Invocations != nil:
			g.Invocations = tr.Invocations
		}
	}
}

// gated says a row holds a tree: status filled them.
func gated(r *Result) bool {
	for _, row := range r.Rows {
		if row.Gate != nil {
			return true
		}
	}
	return false
}

// level is one invocation and how deep under its root it sits.
type level struct {
	b     meterclient.Branch
	level int
}

// treeOrder puts each sub-agent under its parent, roots in the meter's
// order. A parent not listed makes a root.
func treeOrder(bs []meterclient.Branch) []level {
	known := map[string]bool{}
	for _, b := range bs {
		known[b.Invocation] = true
	}
	children := map[string][]meterclient.Branch{}
	var roots []meterclient.Branch
	for _, b := range bs {
		if b.Parent == "" || !known[b.Parent] || b.Parent == b.Invocation {
			roots = append(roots, b)
			continue
		}
		children[b.Parent] = append(children[b.Parent], b)
	}
	var out []level
	seen := map[string]bool{}
	var walk func(b meterclient.Branch, depth int)
	walk = func(b meterclient.Branch, depth int) {
		if seen[b.Invocation] {
			return
		}
		seen[b.Invocation] = true
		out = append(out, level{b, depth})
		for _, c := range children[b.Invocation] {
			walk(c, depth+1)
		}
	}
	for _, b := range roots {
		walk(b, 0)
	}
	return out
}

// charged reads "412 tokens in 1 call ($0.0041)", or "nothing yet".
func charged(b meterclient.Branch) string {
	if b.Calls == 0 && b.InFlight == 0 {
		return "nothing yet"
	}
	s := tokens.Format(b.Tokens) + " tokens in " + plural(b.Calls, "call")
	if b.Cost > 0 {
		s += fmt.Sprintf(" ($%.4f)", float64(b.Cost)/1e6)
	}
	if b.InFlight > 0 {
		s += fmt.Sprintf(", %d in flight", b.InFlight)
	}
	return s
}

func plural(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// unread is a row's line when the meter did not answer.
func unread(g *Gate) string { return "the meter could not be read: " + g.Error }

// gateText is the text form's trees: per issue a line, then its
// invocations indented under their parents.
func gateText(r *Result) string {
	if !gated(r) {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n" + gateTitle + ":\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, row := range r.Rows {
		g := row.Gate
		switch {
		case g == nil:
			continue
		case g.Error != "":
			fmt.Fprintf(tw, "#%d: %s\n", row.Number, plain(unread(g), 300))
			continue
		case len(g.Invocations) == 0:
			fmt.Fprintf(tw, "#%d: none opened\n", row.Number)
			continue
		}
		fmt.Fprintf(tw, "#%d:\n", row.Number)
		for _, l := range treeOrder(g.Invocations) {
			fmt.Fprintf(tw, "%s%s\tas %s\t%s\tdepth %d\testimate %s\tcharged %s\n", strings.Repeat("  ", l.level+1), plain(l.b.Agent, 40),
				plain(l.b.Login, 40), plain(l.b.Invocation, 40), l.b.Depth, tokens.Format(l.b.Estimate), charged(l.b))
		}
	}
	tw.Flush()
	return b.String()
}

// gateMarkdown is the Markdown form's trees: a nested list per issue,
// its untrusted text made inert as in the table.
func gateMarkdown(r *Result) string {
	if !gated(r) {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n**" + gateTitle + "**\n\n")
	for _, row := range r.Rows {
		g := row.Gate
		switch {
		case g == nil:
			continue
		case g.Error != "":
			fmt.Fprintf(&b, "- `#%d`: %s\n", row.Number, Cell(unread(g), 300))
			continue
		case len(g.Invocations) == 0:
			fmt.Fprintf(&b, "- `#%d`: none opened\n", row.Number)
			continue
		}
		fmt.Fprintf(&b, "- `#%d`\n", row.Number)
		for _, l := range treeOrder(g.Invocations) {
			fmt.Fprintf(&b, "%s- %s as %s, %s: depth %d, estimate %s; charged %s\n", strings.Repeat("  ", l.level+1), Cell(l.b.Agent, 40),
				Cell(l.b.Login, 40), Cell(l.b.Invocation, 40), l.b.Depth, tokens.Format(l.b.Estimate), charged(l.b))
		}
	}
	return b.String()
}
