package setup

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/posture"
)

// The organisation teams `init` makes.
const (
	// AgentsTeam holds the agents.
	AgentsTeam = "gns-agents"
	// GateTeam holds the gate account (init --gated).
	GateTeam = "gns-gate"
)

// agentUnits are the agents' modes in the recommended posture
// (docs/contract.md#4b-the-trusted-ledger): they
// write issues and pull requests, read code (their code comes as pull
// requests from forks) and only read Actions.
var agentUnits = map[string]string{posture.Code: "read", posture.Issues: "write", posture.Pulls: "write", posture.Actions: "read"}

// In the gated posture (docs/gate.md) the agents read issues and code;
// the gate writes issues. No Pull requests unit: Gitea lists its
// readers among the issues' writers.
var (
	gatedAgentUnits = map[string]string{posture.Code: "read", posture.Issues: "read"}
	gateUnits       = map[string]string{posture.Code: "read", posture.Issues: "write"}
)

// AgentUnits are the units and modes of init's agents team.
func AgentUnits() map[string]string { return maps.Clone(agentUnits) }

// GatedUnits are the agents' and the gate's teams' units, gated.
func GatedUnits() (agents, gate map[string]string) {
	return maps.Clone(gatedAgentUnits), maps.Clone(gateUnits)
}

// teamPlan is a team init wants, its units, about and members.
type teamPlan struct {
	name, about, units string
	modes              map[string]string
	members            []string
}

// teamPlans are the agents' team, and the gate's when gated.
func teamPlans(agents []string, gate string) []teamPlan {
	if gate == "" {
		return []teamPlan{{AgentsTeam, "gns-guard: the agents write issues and pull requests, read code, and cannot push or touch Actions",
			"Code read, Issues and Pull requests write, Actions read", agentUnits, agents}}
	}
	return []teamPlan{
		{AgentsTeam, "gns-guard: the agents read issues and code, and write through the gate", "Code read, Issues read", gatedAgentUnits, agents},
		{GateTeam, "gns-guard: the gate writes the issues after judging each write, and reads code", "Code read, Issues write", gateUnits,
			[]string{gate}},
	}
}

// PostureStep is one step of the recommended posture: built by this
// run (create), already there (present), or left to do by hand (by-hand),
// with what it is and why.
type PostureStep struct {
	What  string `json:"what"`
	State string `json:"state"`
	Why   string `json:"why,omitempty"`
	do    func(context.Context) error
}

// postureRun plans the recommended posture of one `init`.
type postureRun struct {
	pf    port.PostureSetup
	r     *run
	teams []teamPlan
	steps []*PostureStep
}

func (p *postureRun) add(what, state, why string, do func(context.Context) error) {
	p.steps = append(p.steps, &PostureStep{What: what, State: state, Why: why, do: do})
}

// planPosture plans the teams and the default branch's protection.
func (r *run) planPosture(ctx context.Context, agents []string, gate string) error {
	p := &postureRun{pf: r.sf, r: r, teams: teamPlans(agents, gate)}
	if err := p.planTeams(ctx, gate); err != nil {
		return err
	}
	if err := p.planProtection(ctx); err != nil {
		return err
	}
	r.posture = p
	for _, s := range p.steps {
		r.rep.Posture = append(r.rep.Posture, *s)
		if s.State == StateCreate {
			r.rep.Writes = append(r.rep.Writes, s.What)
		}
	}
	return nil
}

// planTeams creates each team with units, repository and members.
func (p *postureRun) planTeams(ctx context.Context, gate string) error {
	org, err := p.pf.OwnerIsOrg(ctx)
	if err != nil {
		return p.r.w.Error("look up the repository's owner", err)
	}
	owner, _, _ := strings.Cut(p.r.w.Repo, "/")
	switch {
	case !org && gate != "":
		p.add("put the agents in an organisation team with Code and Issues read, and "+gate+" in one with Code read and Issues write",
			StateByHand, owner+" is a user, not an organisation: a collaborator gets one mode on every unit, "+
				"so the gate account, writing issues, would also push code; move the repository to an organisation and run init again", nil)
		return nil
	case !org:
		p.add("put the agents in an organisation team with Code read, Issues and Pull requests write, Actions read", StateByHand,
			owner+" is a user, not an organisation: a collaborator gets one mode on every unit, "+
				"so an agent that writes issues also pushes code and writes Actions; move the repository to an organisation and run init again", nil)
		return nil
	}
	teams, err := p.pf.OrgTeams(ctx)
	if err != nil {
		return p.r.w.Error("list the teams of "+owner, err)
	}
	for _, tp := range p.teams {
		i := slices.IndexFunc(teams, func(t port.Team) bool { return t.Name == tp.name })
		if i < 0 {
			p.planNewTeam(owner, tp)
		} else if err := p.planTeamAccess(ctx, teams[i], tp); err != nil {
			return err
		}
	}
	return nil
}

func (p *postureRun) planNewTeam(owner string, tp teamPlan) {
	var team port.Team
	what := fmt.Sprintf("create the team %s in %s (%s)", tp.name, owner, tp.units)
	p.add(what, StateCreate, "", func(ctx context.Context) (err error) {
		team, err = p.pf.CreateTeam(ctx, tp.name, tp.about, tp.modes)
		return err
	})
	p.add(fmt.Sprintf("give the team %s access to %s", tp.name, p.r.w.Repo), StateCreate, "",
		func(ctx context.Context) error { return p.pf.AddTeamRepo(ctx, team.ID) })
	for _, a := range tp.members {
		p.add(fmt.Sprintf("add %s to the team %s", a, tp.name), StateCreate, "",
			func(ctx context.Context) error { return p.pf.AddTeamMember(ctx, team.ID, a) })
	}
}

func (p *postureRun) planTeamAccess(ctx context.Context, team port.Team, tp teamPlan) error {
	why := ""
	if !maps.Equal(team.Units, tp.modes) {
		why = fmt.Sprintf("its units are %v, not %v: left as they are; doctor says what they allow", team.Units, tp.modes)
	}
	p.add("the team "+tp.name, StatePresent, why, nil)
	has, err := p.pf.TeamHasRepo(ctx, team.ID)
	if err != nil {
		return p.r.w.Error("look up the repositories of the team "+tp.name, err)
	}
	what := fmt.Sprintf("give the team %s access to %s", tp.name, p.r.w.Repo)
	if has {
		p.add(what, StatePresent, "", nil)
	} else {
		p.add(what, StateCreate, "", func(ctx context.Context) error { return p.pf.AddTeamRepo(ctx, team.ID) })
	}
	members, err := p.pf.TeamMembers(ctx, team.ID)
	if err != nil {
		return p.r.w.Error("list the members of the team "+tp.name, err)
	}
	for _, a := range tp.members {
		what := fmt.Sprintf("add %s to the team %s", a, tp.name)
		if slices.ContainsFunc(members, func(m port.Member) bool { return strings.EqualFold(m.Login, a) }) {
			p.add(what, StatePresent, "", nil)
			continue
		}
		p.add(what, StateCreate, "", func(ctx context.Context) error { return p.pf.AddTeamMember(ctx, team.ID, a) })
	}
	return nil
}

// planProtection plans the default branch's protection: no pushes, and
// merging waits for the exact status of the guard's pull_request_target
// job. While the workflow is not on the default branch yet, the check
// could never be met: init says to run again once it is merged.
func (p *postureRun) planProtection(ctx context.Context) error {
	base := p.r.base
	check, _ := posture.StatusContext(WorkflowPath, Workflow(p.r.rep.Runner))
	what := fmt.Sprintf("protect %s: no pushes, and merging waits for `%s`", base, check)
	if !p.workflowOnBase() {
		p.add(what, StateByHand, fmt.Sprintf("the guard's workflow is not on %s yet, so its check could not be met: "+
			"run init again once the pull request is merged", base), nil)
		return nil
	}
	rule, found, err := p.pf.BranchRuleNamed(ctx, base)
	if errors.Is(err, issues.ErrForbidden) {
		p.add(what, StateByHand, "the token may not read the branch protection (a repository admin's can)", nil)
		return nil
	}
	if err != nil {
		return p.r.w.Error("read the protection of "+base, err)
	}
	switch {
	case !found:
		p.add(what, StateCreate, "", func(ctx context.Context) error {
			return p.pf.ProtectBranch(ctx, port.BranchRule{Name: base, StatusCheck: true, Contexts: []string{check}})
		})
	case !rule.StatusCheck || !slices.Contains(rule.Contexts, check):
		contexts := append(slices.Clone(rule.Contexts), check)
		p.add(fmt.Sprintf("require `%s` before merging into %s", check, base), StateCreate, "", func(ctx context.Context) error {
			return p.pf.RequireChecks(ctx, rule.Name, contexts)
		})
	default:
		p.add(fmt.Sprintf("require `%s` before merging into %s", check, base), StatePresent, "", nil)
	}
	if found && rule.Push {
		p.add("restrict pushes to "+base, StateByHand, "its protection lets accounts push: left as it is; allow no one, or only the owners", nil)
	}
	return nil
}

// workflowOnBase: is the workflow on the default branch after the writes?
func (p *postureRun) workflowOnBase() bool {
	for _, f := range p.r.rep.Files {
		if f.Path == WorkflowPath && f.Branch == p.r.base {
			return true
		}
	}
	return false
}

// write turns writes refused for rights into steps by hand.
func (p *postureRun) write(ctx context.Context, rep *Report) error {
	for i, s := range p.steps {
		if s.State != StateCreate {
			continue
		}
		err := s.do(ctx)
		if errors.Is(err, issues.ErrForbidden) || errors.Is(err, issues.ErrNotFound) {
			s.State, s.Why = StateByHand, "the server refused it to the token: "+err.Error()
			rep.Posture[i] = *s
			continue
		}
		if err != nil {
			return p.r.w.Error(s.What, err)
		}
	}
	return nil
}
