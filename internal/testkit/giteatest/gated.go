package giteatest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/scopes"
)

// The gated posture (docs/gate-attacks.md): agents hold read access only
// and write through the gate, whose own account writes after judging.

// GatedAgentScopes are the scopes of an agent's token in the gated
// posture (internal/scopes GatedAgent), measured by internal/testkit/e2e's
// TestGatedAgentTokenScopes: context and status need the first two,
// history the first; the third lets the gate learn whose token it is
// (GET /user).
var GatedAgentScopes = scopes.GatedAgent.Names()

// GateScopes are the scopes of the gate's token (internal/scopes Gate):
// what report needs of an agent's token in the ungated posture, since the
// gate writes what report wrote.
var GateScopes = scopes.Gate.Names()

// AgentUnits are the agents team's units: Issues and Code read, no more.
// Pull requests read would make its members Gitea's assignees, which the
// guard counts as writers (docs/ledger.md#who-can-write).
var AgentUnits = map[string]string{"repo.issues": "read", "repo.code": "read"}

// GateUnits are the gate team's units: Issues write, Code read.
var GateUnits = map[string]string{"repo.issues": "write", "repo.code": "read"}

// Account is a user of the server and two tokens of theirs.
type Account struct {
	Login string
	// Token has the scopes the posture gives the account.
	Token string
	// AllScopes is a token with every scope: what the account itself may
	// do, whatever token it holds.
	AllScopes string
}

// Gated is a private repository of a private organisation in the gated
// posture: the organisation's owner (no site administrator), the team
// agents (AgentUnits) holding the agents, and the team gate (GateUnits)
// holding the gate's account. No account is a collaborator.
type Gated struct {
	Org, Repo string
	// Owner owns the organisation; both its tokens have every scope.
	Owner Account
	// Gate is the gate's account; its Token has GateScopes.
	Gate Account
	// Agents are the agents' accounts; their Token has GatedAgentScopes.
	Agents []Account
	// AgentsTeam and GateTeam are the teams' ids.
	AgentsTeam, GateTeam int64
}

// NewGated sets the gated posture up with agents agents' accounts, as
// the organisation's owner would: the site administrator creates the
// owner and the organisation, the owner the repository and the teams.
// It fails the test on error.
func (s *Server) NewGated(t testing.TB, agents int) *Gated {
	t.Helper()
	g := s.NewGatedAccounts(t, agents)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.gatedTeams(ctx, g); err != nil {
		t.Fatalf("giteatest: the gated posture's teams: %v\n%s", err, s.LogTail())
	}
	return g
}

// NewGatedAccounts is NewGated without the teams (AgentsTeam and
// GateTeam are 0): the accounts, the organisation and its private
// repository, for a test that builds the teams another way (init).
func (s *Server) NewGatedAccounts(t testing.TB, agents int) *Gated {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	seq := s.seq.Add(1)
	g := &Gated{Org: fmt.Sprintf("gated%d", seq), Repo: s.repoName(t)}
	var err error
	if g.Owner, err = s.newAccount(ctx, fmt.Sprintf("gatedowner%d", seq), []string{"all"}); err != nil {
		t.Fatal(err)
	}
	if g.Gate, err = s.newAccount(ctx, fmt.Sprintf("gate%d", seq), GateScopes); err != nil {
		t.Fatal(err)
	}
	for i := range agents {
		a, err := s.newAccount(ctx, fmt.Sprintf("gatedagent%d-%d", seq, i+1), GatedAgentScopes)
		if err != nil {
			t.Fatal(err)
		}
		g.Agents = append(g.Agents, a)
	}
	if err := s.gatedRepo(ctx, g); err != nil {
		t.Fatalf("giteatest: the gated posture: %v\n%s", err, s.LogTail())
	}
	return g
}

// newAccount creates a user who is no administrator, with a token of
// scopes and one of every scope.
func (s *Server) newAccount(ctx context.Context, login string, scopes []string) (Account, error) {
	toks, err := s.NewUserScoped(ctx, login, scopes, []string{"all"})
	if err != nil {
		return Account{}, err
	}
	return Account{Login: login, Token: toks[0], AllScopes: toks[1]}, nil
}

// gatedRepo creates the organisation and its repository.
func (s *Server) gatedRepo(ctx context.Context, g *Gated) error {
	org := map[string]any{"username": g.Org, "visibility": "private"}
	if err := s.api(ctx, http.MethodPost, "/admin/users/"+url.PathEscape(g.Owner.Login)+"/orgs", s.AdminToken, org, nil); err != nil {
		return err
	}
	repo := map[string]any{"name": g.Repo, "private": true, "auto_init": true, "default_branch": "main", "readme": "Default"}
	return s.api(ctx, http.MethodPost, "/orgs/"+url.PathEscape(g.Org)+"/repos", g.Owner.Token, repo, nil)
}

// gatedTeams creates the two teams.
func (s *Server) gatedTeams(ctx context.Context, g *Gated) error {
	logins := make([]string, len(g.Agents))
	for i, a := range g.Agents {
		logins[i] = a.Login
	}
	var err error
	if g.AgentsTeam, err = g.AddTeam(ctx, s, "agents", AgentUnits, logins...); err != nil {
		return err
	}
	g.GateTeam, err = g.AddTeam(ctx, s, "gate", GateUnits, g.Gate.Login)
	return err
}

// AddTeam creates a team of the organisation with units (Gitea's
// units_map), gives it the repository and adds the members, as the
// owner. It returns the team's id.
func (g *Gated) AddTeam(ctx context.Context, s *Server, name string, units map[string]string, members ...string) (int64, error) {
	var team struct {
		ID int64 `json:"id"`
	}
	in := map[string]any{"name": name, "units_map": units, "includes_all_repositories": false}
	if err := s.api(ctx, http.MethodPost, "/orgs/"+url.PathEscape(g.Org)+"/teams", g.Owner.Token, in, &team); err != nil {
		return 0, err
	}
	path := fmt.Sprintf("/teams/%d/repos/%s/%s", team.ID, url.PathEscape(g.Org), url.PathEscape(g.Repo))
	if err := s.api(ctx, http.MethodPut, path, g.Owner.Token, nil, nil); err != nil {
		return 0, err
	}
	for _, m := range members {
		if err := s.api(ctx, http.MethodPut, fmt.Sprintf("/teams/%d/members/%s", team.ID, url.PathEscape(m)), g.Owner.Token, nil, nil); err != nil {
			return 0, err
		}
	}
	return team.ID, nil
}

// Path is an API path under the repository.
func (g *Gated) Path(format string, args ...any) string {
	return "/repos/" + url.PathEscape(g.Org) + "/" + url.PathEscape(g.Repo) + fmt.Sprintf(format, args...)
}
