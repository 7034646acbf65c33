package posture

import (
	"slices"
	"strings"
	"testing"
)

// gatedFacts is an organisation's repository in the gated posture: the
// agents' team reads, the gate's team writes.
func gatedFacts() (Facts, Gate) {
	f := Facts{Repo: "acme/api", Owner: "acme", OwnerIsOrg: true, DefaultBranch: "main", Teams: []Team{
		{Name: "gns-agents", Permission: Read, Units: map[string]Mode{Issues: Read, Code: Read}, Members: []string{"coder", "rev-bot"}},
		{Name: "gns-gate", Permission: Read, Units: map[string]Mode{Issues: Write, Code: Read}, Members: []string{"gns-gate"}},
	}}
	g := Gate{Account: "gns-gate", Agents: map[string][]string{"coder": {"coder"}, "code-reviewer": {"rev-bot"}},
		MeterURL: "https://meter.test", MeterPublicKey: "key1", Writers: []string{"gns-gate"},
		Meter: GateMeter{Gate: true, PublicKey: "key1"}}
	return f, g
}

func gateCheck(t *testing.T, checks []Check, id string) Check {
	t.Helper()
	i := slices.IndexFunc(checks, func(c Check) bool { return c.ID == id })
	if i < 0 {
		t.Fatalf("no check %s in %+v", id, checks)
	}
	return checks[i]
}

// TestJudgeGateHolds: the posture init --gated builds holds every check,
// in a fixed order.
func TestJudgeGateHolds(t *testing.T) {
	f, g := gatedFacts()
	checks := JudgeGate(f, g)
	var ids []string
	for _, c := range checks {
		ids = append(ids, c.ID)
		if !c.Holds {
			t.Errorf("%s does not hold: %s", c.ID, c.Why)
		}
	}
	if want := []string{CheckGateAccount, CheckGateReadOnly, CheckGateAgents, CheckGateSettings, CheckGateMeter}; !slices.Equal(ids, want) {
		t.Errorf("checks %v, want %v", ids, want)
	}
	if c := gateCheck(t, checks, CheckGateAgents); c.Why != "agents maps 2 agent(s) to coder, rev-bot" {
		t.Errorf("gate.agents: %s", c.Why)
	}
}

// TestJudgeGateNamesAWritingAgent: a mapped login Gitea lists as a
// writer breaks the posture, named with what gives it write.
func TestJudgeGateNamesAWritingAgent(t *testing.T) {
	f, g := gatedFacts()
	f.Teams = append(f.Teams, Team{Name: "devs", Units: map[string]Mode{Issues: Write}, Members: []string{"coder"}},
		Team{Name: "reviewers", Units: map[string]Mode{Pulls: Read}, Members: []string{"rev-bot"}})
	f.Collaborators = []Collaborator{{Login: "Coder", Permission: Write}}
	g.Writers = append(g.Writers, "coder", "rev-bot")
	c := gateCheck(t, JudgeGate(f, g), CheckGateReadOnly)
	if c.Holds || !slices.Equal(c.Logins, []string{"coder", "rev-bot"}) {
		t.Fatalf("%+v", c)
	}
	for _, want := range []string{"coder (write collaborator, team devs) can write the issues", "rev-bot (team reviewers) can write",
		"goes around the gate"} {
		if !strings.Contains(c.Why, want) {
			t.Errorf("the why lacks %q: %s", want, c.Why)
		}
	}
	// Without the teams' members (no owner's token), Gitea's list still
	// decides; the why says so.
	f.Teams, f.Collaborators = nil, nil
	if c := gateCheck(t, JudgeGate(f, g), CheckGateReadOnly); c.Holds || !strings.Contains(c.Why, "coder (Gitea lists it among the writers)") {
		t.Errorf("%+v", c)
	}
	// A user's repository: its owner writes.
	f, g = gatedFacts()
	f.OwnerIsOrg, f.Owner = false, "alice"
	g.Agents["coder"] = []string{"alice"}
	if c := gateCheck(t, JudgeGate(f, g), CheckGateReadOnly); c.Holds || !strings.Contains(c.Why, "alice (the owner)") {
		t.Errorf("%+v", c)
	}
}

// TestJudgeGateBroken: each check broken, or not made, on its own.
func TestJudgeGateBroken(t *testing.T) {
	for _, c := range []struct {
		name, id, why string
		change        func(*Gate)
	}{
		{"the gate cannot write", CheckGateAccount, "gns-gate cannot write the issues", func(g *Gate) { g.Writers = nil }},
		{"writers unread", CheckGateReadOnly, CouldNotCheck + "403", func(g *Gate) { g.WritersUnread = "403" }},
		{"no agents", CheckGateAgents, "agents maps no agent", func(g *Gate) { g.Agents = nil }},
		{"no meter-url", CheckGateSettings, "no meter-url: agents have no gate", func(g *Gate) { g.MeterURL = "" }},
		{"no key", CheckGateSettings, "no meter-public-key", func(g *Gate) { g.MeterPublicKey = "" }},
		{"no meter-url to ask", CheckGateMeter, "no meter-url", func(g *Gate) { g.MeterURL = "" }},
		{"meter unread", CheckGateMeter, CouldNotCheck + "refused", func(g *Gate) { g.Meter.Unread = "refused" }},
		{"no gate served", CheckGateMeter, "does not serve the gate", func(g *Gate) { g.Meter.Gate = false }},
		{"another key", CheckGateMeter, "the gate signs with key2, not meter-public-key key1", func(g *Gate) { g.Meter.PublicKey = "key2" }},
	} {
		f, g := gatedFacts()
		c.change(&g)
		got := gateCheck(t, JudgeGate(f, g), c.id)
		if got.Holds || !strings.Contains(got.Why, c.why) {
			t.Errorf("%s: %+v, want broken saying %q", c.name, got, c.why)
		}
	}
}
