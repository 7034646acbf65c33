package issues

import (
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/markdown"
)

// Authors says who speaks on an issue (docs/ledger.md#what-the-next-agent-reads):
// the accounts that can write it, and which of them may speak as which
// agent. The guard decides it (guard.Plan.Authors); the entry load, the
// digest, the results the rules count and recover all ask it.
type Authors struct {
	// Known says who can write the issue is known. Without it (an issue
	// read from a file, a list the server would not give) every author
	// counts as one.
	Known bool
	// Writers are the logins known to write the issue, sorted: the
	// repository's owner, the guard, and the accounts the server lists
	// as able to (its collaborators, teams and owner with write access).
	Writers []string
	// Agents maps agent name to logins speaking as it; empty lets any
	// writer.
	Agents map[string][]string
	// Everyone loads outsiders' comments too, still outside the judged
	// conversation.
	Everyone bool
}

// CanWrite reports whether login can write the issue.
func (a Authors) CanWrite(login string) bool {
	if !a.Known {
		return true
	}
	_, ok := slices.BinarySearch(a.Writers, login)
	return ok
}

// Loads reports whether login's comment belongs in the entry load.
func (a Authors) Loads(login string) bool { return a.Everyone || a.CanWrite(login) }

// SpeaksAs reports whether login may speak as agent: it can write the
// issue and, under an agents map, is one of the agent's logins. An
// outsider speaks for no agent, mapped or not: in the gated posture the
// agents' mapped accounts only read.
func (a Authors) SpeaksAs(login, agent string) bool {
	if !a.CanWrite(login) {
		return false
	}
	return len(a.Agents) == 0 || slices.Contains(a.Agents[agent], login)
}

// Mapped says the agents setting maps agent names to logins.
func (a Authors) Mapped() bool { return len(a.Agents) > 0 }

// LoginsOf names the logins that may speak as agent, for a message:
// quoted and joined by commas, or "no login" when the map names none.
func (a Authors) LoginsOf(agent string) string {
	ls := a.Agents[agent]
	if len(ls) == 0 {
		return "no login"
	}
	q := make([]string, len(ls))
	for i, l := range ls {
		q[i] = markdown.Quote(l)
	}
	return strings.Join(q, ", ")
}
