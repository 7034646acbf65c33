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

// AgentsTeam is the organisation team `init` puts the agents in.
const AgentsTeam = "gns-agents"

// agentUnits are the agents' modes in the recommended posture
// (docs/contract.md#4b-the-trusted-ledger): they
// write issues and pull requests, read code (their code comes as pull
// requests from forks) and only read Actions.
var agentUnits = map[string]string{posture.Code: "read", posture.Issues: "write", posture.Pulls: "write", posture.Actions: "read"}

// AgentUnits are the units and modes of init's agents team.
func AgentUnits() map[string]string { return maps.Clone(agentUnits) }

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
	pf     port.PostureSetup
	r      *run
	agents []string
	steps  []*PostureStep
}

func (p *postureRun) add(what, state, why string, do func(context.Context) error) {
	p.steps = append(p.steps, &PostureStep{What: what, State: state, Why: why, do: do})
}

// planPosture plans the agents' team and the default branch's protection.
func (r *run) planPosture(ctx context.Context, agents []string) error {
	p := &postureRun{pf: r.sf, r: r, agents: agents}
	if err := p.planTeam(ctx); err != nil {
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

// planTeam creates the team with units, repository and agents.
func (p *postureRun) planTeam(ctx context.Context) error {
	org, err := p.pf.OwnerIsOrg(ctx)
	if err != nil {
		return p.r.w.Error("look up the repository's owner", err)
	}
	owner, _, _ := strings.Cut(p.r.w.Repo, "/")
	if !org {
		p.add("put the agents in an organisation team with Code read, Issues and Pull requests write, Actions read", StateByHand,
			owner+" is a user, not an organisation: a collaborator gets one mode on every unit, "+
				"so an agent that writes issues also pushes code and writes Actions; move the repository to an organisation and run init again", nil)
		return nil
	}
	teams, err := p.pf.OrgTeams(ctx)
	if err != nil {
		return p.r.w.Error("list the teams of "+owner, err)
	}
	i := slices.IndexFunc(teams, func(t port.Team) bool { return t.Name == AgentsTeam })
	if i < 0 {
		return p.planNewTeam(owner)
	}
	return p.planTeamAccess(ctx, teams[i])
}

func (p *postureRun) planNewTeam(owner string) error {
	var team port.Team
	const about = "gns-guard: the agents write issues and pull requests, read code, and cannot push or touch Actions"
	what := fmt.Sprintf("create the team %s in %s (Code read, Issues and Pull requests write, Actions read)", AgentsTeam, owner)
	p.add(what, StateCreate, "", func(ctx context.Context) (err error) {
		team, err = p.pf.CreateTeam(ctx, AgentsTeam, about, agentUnits)
		return err
	})
	p.add(fmt.Sprintf("give the team %s access to %s", AgentsTeam, p.r.w.Repo), StateCreate, "",
		func(ctx context.Context) error { return p.pf.AddTeamRepo(ctx, team.ID) })
	for _, a := range p.agents {
		p.add(fmt.Sprintf("add %s to the team %s", a, AgentsTeam), StateCreate, "",
			func(ctx context.Context) error { return p.pf.AddTeamMember(ctx, team.ID, a) })
	}
	return nil
}

func (p *postureRun) planTeamAccess(ctx context.Context, team port.Team) error {
	why := ""
	if !maps.Equal(team.Units, agentUnits) {
		why = fmt.Sprintf("its units are %v, not %v: left as they are; doctor says what they allow", team.Units, agentUnits)
	}
	p.add("the team "+AgentsTeam, StatePresent, why, nil)
	has, err := p.pf.TeamHasRepo(ctx, team.ID)
	if err != nil {
		return p.r.w.Error("look up the repositories of the team "+AgentsTeam, err)
	}
	what := fmt.Sprintf("give the team %s access to %s", AgentsTeam, p.r.w.Repo)
	if has {
		p.add(what, StatePresent, "", nil)
	} else {
		p.add(what, StateCreate, "", func(ctx context.Context) error { return p.pf.AddTeamRepo(ctx, team.ID) })
	}
	members, err := p.pf.TeamMembers(ctx, team.ID)
	if err != nil {
		return p.r.w.Error("list the members of the team "+AgentsTeam, err)
	}
	for _, a := range p.agents {
		what := fmt.Sprintf("add %s to the team %s", a, AgentsTeam)
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
