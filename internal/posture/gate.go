package posture

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Gate is the gated posture as the settings and the server describe it
// (docs/gate.md).
type Gate struct {
	// Account is the setting gate-account.
	Account string
	// Agents is the setting agents: agent name to logins.
	Agents map[string][]string
	// MeterURL and MeterPublicKey are the settings of the same names.
	MeterURL, MeterPublicKey string
	// Writers are the logins Gitea lists as the issues' writers.
	Writers []string
	// WritersUnread says why Writers could not be read ("": read).
	WritersUnread string
	// Meter is what the meter at MeterURL answered.
	Meter GateMeter
}

// GateMeter is the meter's GET /about, as far as the gate goes.
type GateMeter struct {
	// Unread says why the meter did not answer ("": it did).
	Unread string
	// Gate says it serves the gate; PublicKey is its signing key.
	Gate      bool
	PublicKey string
}

// The gated posture's checks, in the order JudgeGate returns them.
const (
	CheckGateAccount  = "gate.account"
	CheckGateReadOnly = "gate.agents-read-only"
	CheckGateAgents   = "gate.agents"
	CheckGateSettings = "gate.settings"
	CheckGateMeter    = "gate.meter"
)

// GateCloses are the attacks the gated posture closes (docs/gate.md).
var GateCloses = []string{
	"rewriting the task or the title",
	"deleting or editing results and the guard's comment",
	"adding or removing labels, and renaming label definitions",
	"editing the checkpoint",
	"spending outside an invocation the gate opened",
}

// GateLeavesOpen are the attacks it does not close.
var GateLeavesOpen = []string{
	"a read-only account can still comment: its comment is an outsider's, which the guard counts as no result",
	"whoever holds the gate account's token or meter-key writes as the gate",
	"people with write access still write: the guard judges them as before",
}

// JudgeGate says whether the gated posture holds: the gate writes, no
// mapped agent does, and the gate is configured and served.
func JudgeGate(f Facts, g Gate) []Check {
	return []Check{gateAccountCheck(f, g), readOnlyCheck(f, g), gateAgentsCheck(g), gateSettingsCheck(g), gateMeterCheck(g)}
}

// writes says Gitea counts login an issue writer.
func (g Gate) writes(f Facts, login string) bool {
	eq := func(s string) bool { return strings.EqualFold(s, login) }
	return slices.ContainsFunc(g.Writers, eq) || !f.OwnerIsOrg && eq(f.Owner)
}

func gateAccountCheck(f Facts, g Gate) Check {
	switch {
	case g.WritersUnread != "":
		return broken(CheckGateAccount, CouldNotCheck+g.WritersUnread)
	case g.writes(f, g.Account):
		return held(CheckGateAccount, g.Account+" can write the issues: Gitea lists it among their writers")
	}
	return broken(CheckGateAccount, g.Account+" cannot write the issues (Gitea does not list it among their writers): "+
		"the gate's every write is refused; put it in a team with Issues write on the repository")
}

// mapped are the logins the agents setting maps, sorted, once each.
func (g Gate) mapped() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(g.Agents)) {
		for _, l := range g.Agents[name] {
			if !slices.ContainsFunc(out, func(s string) bool { return strings.EqualFold(s, l) }) {
				out = append(out, l)
			}
		}
	}
	slices.Sort(out)
	return out
}

func readOnlyCheck(f Facts, g Gate) Check {
	if g.WritersUnread != "" {
		return broken(CheckGateReadOnly, CouldNotCheck+g.WritersUnread)
	}
	var bad, whys []string
	for _, l := range g.mapped() {
		if g.writes(f, l) {
			bad = append(bad, l)
			whys = append(whys, fmt.Sprintf("%s (%s) can write the issues", l, grantsWrite(f, l)))
		}
	}
	if len(bad) == 0 {
		return held(CheckGateReadOnly, "no login agents maps can write the issues: each writes through the gate")
	}
	c := broken(CheckGateReadOnly, strings.Join(whys, "; ")+": a writer goes around the gate, which closes nothing for it; "+
		"give the agents Issues and Code read only, no Pull requests, no collaboration")
	c.Logins = bad
	return c
}

// grantsWrite names what makes login a writer, as far as the facts go.
func grantsWrite(f Facts, login string) string {
	eq := func(s string) bool { return strings.EqualFold(s, login) }
	var via []string
	for _, c := range f.Collaborators {
		if eq(c.Login) && c.Permission >= Write {
			via = append(via, c.Permission.String()+" collaborator")
		}
	}
	for _, t := range f.Teams {
		if slices.ContainsFunc(t.Members, eq) && assigns(t) {
			via = append(via, "team "+t.Name)
		}
	}
	if !f.OwnerIsOrg && eq(f.Owner) {
		via = append(via, "the owner")
	}
	if len(via) == 0 {
		return "Gitea lists it among the writers"
	}
	return strings.Join(via, ", ")
}

// assigns: Gitea lists a team's members as assignees (writers).
func assigns(t Team) bool {
	if t.Permission >= Admin || t.Units[Pulls] >= Read {
		return true
	}
	for _, m := range t.Units {
		if m >= Write {
			return true
		}
	}
	return false
}

func gateAgentsCheck(g Gate) Check {
	if l := g.mapped(); len(l) > 0 {
		return held(CheckGateAgents, fmt.Sprintf("agents maps %d agent(s) to %s", len(g.Agents), strings.Join(l, ", ")))
	}
	return broken(CheckGateAgents, "agents maps no agent: the gate serves only the logins it maps, so no agent can write; "+
		"map each agent to its login")
}

func gateSettingsCheck(g Gate) Check {
	var whys []string
	if g.MeterURL == "" {
		whys = append(whys, "no meter-url: agents have no gate to write through")
	}
	if g.MeterPublicKey == "" {
		whys = append(whys, "no meter-public-key: the guard verifies none of the gate's results (gns-guard meter --public-key prints it)")
	}
	if len(whys) > 0 {
		return broken(CheckGateSettings, "the settings set "+strings.Join(whys, "; "))
	}
	return held(CheckGateSettings, "the settings set meter-url and meter-public-key")
}

func gateMeterCheck(g Gate) Check {
	m := g.Meter
	switch {
	case g.MeterURL == "":
		return broken(CheckGateMeter, "no meter-url: no gate to ask")
	case m.Unread != "":
		return broken(CheckGateMeter, CouldNotCheck+m.Unread)
	case !m.Gate:
		return broken(CheckGateMeter, "the meter at "+g.MeterURL+" does not serve the gate (GET /about: gate false): "+
			"start it with --gate-token-env and the token of "+g.Account)
	case g.MeterPublicKey == "":
		return broken(CheckGateMeter, "the gate signs with "+m.PublicKey+", and meter-public-key is not set: publish it")
	case m.PublicKey != g.MeterPublicKey:
		return broken(CheckGateMeter, fmt.Sprintf("the gate signs with %s, not meter-public-key %s: the guard takes none of "+
			"its results for an agent's", m.PublicKey, g.MeterPublicKey))
	}
	return held(CheckGateMeter, "the meter at "+g.MeterURL+" serves the gate, signing with meter-public-key")
}
