package guard

import (
	"fmt"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// RuleImpersonated: an agent comment from a login the agents setting does
// not map.
const RuleImpersonated = "agent-impersonated"

// checkImpersonated fails an agent comment whose author can write the issue but
// is not a login agents maps to the agent it claims
// (docs/ledger.md#what-the-next-agent-reads). Without the map a writer may
// speak as any agent; outsiders are judged by no rule. The comment counts as
// nobody's result.
func checkImpersonated(e *decision) (out []Violation) {
	a := e.plan.Authors
	if !a.Mapped() {
		return nil
	}
	seen := map[int64]bool{}
	for _, c := range e.comments() {
		if seen[c.ID] || c.TooLarge || c.Author == e.in.Self || e.outsider(c) {
			continue
		}
		seen[c.ID] = true
		for _, agent := range claimedAgents(c.Body) {
			if a.Speaks(c, agent) {
				continue
			}
			pv := e.cfg.Labels.PermissionViolation
			path := fmt.Sprintf("comment#%d", c.ID)
			v := at(checkpoint.Pos{Line: 1, Col: 1}, path, "comment #%d by %s speaks as agent %s, but agents maps %s to %s only: it counts "+
				"as nobody's result. A person deletes the comment (or maps the login to the agent in %s), then removes %s",
				c.ID, markdown.Quote(a.Voice(c)), markdown.Quote(agent), markdown.Quote(agent), a.LoginsOf(agent), ".gitea/gns-guard.yml", pv)
			if c.Author == a.Gate && a.Voice(c) == c.Author {
				v = at(checkpoint.Pos{Line: 1, Col: 1}, path, "comment #%d by the gate's account %s speaks as agent %s without the meter's "+
					"valid signature of the agent's login (unsigned, edited, or signed by another key): it counts as nobody's result. "+
					"A person deletes the comment, then removes %s", c.ID, markdown.Quote(c.Author), markdown.Quote(agent), pv)
			}
			v.Label = pv
			out = append(out, v)
			e.linkComment(path, c.HTMLURL)
			break
		}
	}
	return out
}

// linkComment keeps a comment's address for the status comment's findings.
func (e *decision) linkComment(path, url string) {
	if url == "" {
		return
	}
	if e.plan.Links == nil {
		e.plan.Links = map[string]string{}
	}
	e.plan.Links[path] = url
}
