package access

import (
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// Grants says what makes a writer, for messages.
const Grants = "a team with Issues write on the repository, or a collaboration with write"

// Writers is the server's list of issue writers.
type Writers struct {
	// Owner is the repository's owner: a user or an organisation.
	Owner string
	// Listed are the logins the server lists as writers: Gitea's
	// assignees of the repository (collaborators with write, members of
	// a team with a unit at write, a user who owns it).
	Listed []string
}

// Can reports whether login can write the repository's issues: the list
// names it, or it owns the repository. Gitea's logins are unique whatever
// their case.
func (w Writers) Can(login string) bool {
	if login == "" {
		return false
	}
	return strings.EqualFold(login, w.Owner) || slices.ContainsFunc(w.Listed, func(l string) bool { return strings.EqualFold(l, login) })
}

// Logins are sorted and unique, the owner included.
func (w Writers) Logins() []string {
	out := slices.Clone(w.Listed)
	if w.Owner != "" {
		out = append(out, w.Owner)
	}
	out = slices.DeleteFunc(out, func(l string) bool { return l == "" })
	slices.Sort(out)
	return slices.Compact(out)
}

// ActsAs reports whether writer login may act as agent: under the agents
// map (agent name → the logins that may speak as it), only as an agent
// mapped to it; without one, as any agent. No agent named is one of
// login's own (docs/contract.md#4b-the-trusted-ledger, agents are
// accounts).
func ActsAs(agents map[string][]string, login, agent string) bool {
	a := issues.Authors{Known: true, Writers: []string{login}, Agents: agents}
	if agent != "" || !a.Mapped() {
		return a.SpeaksAs(login, agent)
	}
	for name := range agents {
		if a.SpeaksAs(login, name) {
			return true
		}
	}
	return false
}
