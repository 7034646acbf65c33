package cli

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/scopes"
	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/gns-guard/gns-guard/internal/setup"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
)

var gatedArgs = []string{"--gated", "--gate-account", "gns-gate", "--agents", "coder=agent1,code-reviewer=agent2"}

// init --gated plans the two teams, and a dry run writes nothing but
// says which tokens to make with which scopes.
func TestInitGatedDryRun(t *testing.T) {
	s := fakeforge.New("alice/proj")
	s.Org = true
	useSetupServer(t, s)
	stdout, stderr, code := runCLI(t, nil, "", slices.Concat(initArgs, gatedArgs, []string{"--commit", "--dry-run"})...)
	if code != 0 || stderr != "" || len(setupWrites(s)) != 0 {
		t.Fatalf("exit %d, writes %q:\n%s%s", code, setupWrites(s), stdout, stderr)
	}
	t.Logf("\n%s", stdout)
	for _, want := range []string{
		"  create the team gns-agents in alice (Code read, Issues read): would be done\n",
		"  add agent1 to the team gns-agents: would be done\n",
		"  add agent2 to the team gns-agents: would be done\n",
		"  create the team gns-gate in alice (Code read, Issues write): would be done\n",
		"  give the team gns-gate access to alice/proj: would be done\n",
		"  add gns-gate to the team gns-gate: would be done\n",
		"  - create the team gns-gate in alice (Code read, Issues write)\n",
		"GNS_GUARD_TOKEN to a token of the guard's own account (scopes " + scopes.Guard.List() + "), a member of the team gns-gate:",
		"Give each agent's account (agent1, agent2) a token with the scopes " + scopes.GatedAgent.List() + ", and no write scope",
		"Give the gate account gns-gate a token with the scopes " + scopes.Gate.List() + ", and start the meter with it",
		"--scope alice --gate-token-env GNS_GATE_TOKEN`.",
		"Set meter-url (the meter's address) and meter-public-key",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the dry run's output lacks %q", want)
		}
	}
	if strings.Contains(stdout, "Pull requests write") {
		t.Error("the gated dry run plans the ungated team")
	}
}

// init --gated makes the agents' team read and the gate's write, with
// their members, and the settings file names the gate account; the
// report says so as JSON.
func TestInitGated(t *testing.T) {
	s := fakeforge.New("alice/proj")
	s.Org = true
	useSetupServer(t, s)
	rep, code := initJSON(t, append(slices.Clone(gatedArgs), "--commit")...)
	if code != 0 || rep.GateAccount != "gns-gate" {
		t.Fatalf("exit %d: %+v", code, rep)
	}
	ctx := context.Background()
	c := s.As("alice")
	teams, err := c.OrgTeams(ctx)
	if err != nil {
		t.Fatal(err)
	}
	agentUnits, gateUnits := setup.GatedUnits()
	want := map[string]struct {
		units   map[string]string
		members []string
	}{setup.AgentsTeam: {agentUnits, []string{"agent1", "agent2"}}, setup.GateTeam: {gateUnits, []string{"gns-gate"}}}
	if len(teams) != len(want) {
		t.Fatalf("teams %+v", teams)
	}
	for _, team := range teams {
		w := want[team.Name]
		ms, _ := c.TeamMembers(ctx, team.ID)
		var logins []string
		for _, m := range ms {
			logins = append(logins, m.Login)
		}
		has, _ := c.TeamHasRepo(ctx, team.ID)
		if !maps.Equal(team.Units, w.units) || !slices.Equal(logins, w.members) || !has {
			t.Errorf("team %s: units %v, members %v, has the repository %v; want %v, %v", team.Name, team.Units, logins, has, w.units, w.members)
		}
	}
	l, err := settings.FileLayer(settings.FileName, s.Files("main")[settings.FileName])
	if err != nil {
		t.Fatal(err)
	}
	res, err := settings.Resolve(l)
	if err != nil || res.Config.GateAccount != "gns-gate" || !slices.Equal(res.Config.Agents["coder"], []string{"agent1"}) {
		t.Errorf("the settings file init wrote: %v %+v\n%s", err, res.Config, s.Files("main")[settings.FileName])
	}

	// A settings file init did not write: a step says to name the gate.
	s = fakeforge.New("alice/proj")
	s.Org = true
	s.AddTeam(port.Team{Name: setup.AgentsTeam, Units: setup.AgentUnits()}, true, "agent1")
	useSetupServer(t, s)
	if _, err := s.As("alice").CommitFiles(ctx, port.Commit{Branch: "main", Message: "settings",
		Files: []port.FileChange{{Path: settings.FileName, Content: []byte("prune-threshold: 0.7\n")}}}); err != nil {
		t.Fatal(err)
	}
	stdout, _, _ := runCLI(t, nil, "", slices.Concat(initArgs, gatedArgs, []string{"--commit"})...)
	for _, want := range []string{"Set gate-account: gns-gate, and map each agent to its login in agents, in .gitea/gns-guard.yml",
		"  the team gns-agents: already so (its units are map[repo.actions:read repo.code:read repo.issues:write repo.pulls:write], " +
			"not map[repo.code:read repo.issues:read]: left as they are; doctor says what they allow)\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("init on an ungated team and its own settings lacks %q:\n%s", want, stdout)
		}
	}
}

// --gated and --gate-account go together, need NAME=LOGIN agents, and a
// login.
func TestInitGatedUsage(t *testing.T) {
	useSetupServer(t, newSetupServer())
	for _, args := range [][]string{
		{"--gated", "--agents", "coder=agent1"},
		{"--gate-account", "gns-gate", "--agents", "coder=agent1"},
		{"--gated", "--gate-account", "gns-gate", "--agents", "agent1"},
		{"--gated", "--gate-account", "gns gate", "--agents", "coder=agent1"},
	} {
		if _, stderr, code := runCLI(t, nil, "", append(slices.Clone(initArgs), args...)...); code != exitcode.Usage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, exitcode.Usage, stderr)
		}
	}
}
