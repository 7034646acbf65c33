package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/posture"
	"github.com/gns-guard/gns-guard/internal/scopes"
)

// The reads of a repository's posture, for `gns-guard doctor` and the
// action (docs/contract.md#4b-the-trusted-ledger). Gitea answers some only
// to the owner (secrets, team members, protection settings): they are read
// with the admin client, and a refusal is a fact left unread, not an error.

// MaxWorkflowBytes bounds what the posture reads of a workflow file.
const MaxWorkflowBytes = 256 << 10

// apiTeam is a team as GET /repos/{o}/{r}/teams lists it.
type apiTeam struct {
	ID         int64             `json:"id"`
	Name       string            `json:"name"`
	Permission string            `json:"permission"`
	UnitsMap   map[string]string `json:"units_map"`
}

// apiUser: is_admin shows only to site admins and the user.
type apiUser struct {
	Login   string `json:"login"`
	IsAdmin bool   `json:"is_admin"`
}

// PostureFacts reads the posture of the repository at branch: teams and
// collaborators, the branch's workflows, its protection and the secrets'
// names. admin (nil: the client) reads what only the owner may; a refusal
// leaves the fact unread with hint. The settings file's facts are the
// caller's.
func (c *Client) PostureFacts(ctx context.Context, admin port.PostureAdmin, branch, hint string) (posture.Facts, error) {
	given := admin != nil
	if !given {
		admin = c
	}
	f := posture.Facts{Repo: c.owner + "/" + c.repo, Owner: c.owner, DefaultBranch: branch, Unread: map[string]string{}}
	p := &postureRead{c: c, admin: admin, given: given, f: &f, hint: hint, admins: map[string]bool{}}
	for _, step := range []func(context.Context) error{p.teams, p.collaborators, p.workflows, p.branch, p.secrets} {
		if err := step(ctx); err != nil {
			return f, err
		}
	}
	for login := range p.admins {
		f.SiteAdmins = append(f.SiteAdmins, login)
	}
	sort.Strings(f.SiteAdmins)
	return f, nil
}

// postureRead is one read of a posture.
type postureRead struct {
	c      *Client
	admin  port.PostureAdmin
	given  bool // admin is the owner's token given, not c
	f      *posture.Facts
	hint   string
	admins map[string]bool // site admins seen in the lists
}

// refused says the token lacks rights: the fact stays unread.
func refused(err error) bool {
	return errors.Is(err, issues.ErrForbidden) || errors.Is(err, issues.ErrNotFound) || errors.Is(err, issues.ErrUnauthorized)
}

// unread records why fact is unread: no owner's token, or the given one's
// refusal (err).
func (p *postureRead) unread(fact, what string, err error) {
	se := issues.MissingScope(err)
	switch {
	case !p.given:
		p.f.Unread[fact] = what + " needs the repository owner's token (" + p.hint + ")"
	case se != nil:
		p.f.Unread[fact] = what + ": " + scopes.Admin.Lacks("the owner's token given", se.Missing)
	case errors.Is(err, issues.ErrUnauthorized):
		p.f.Unread[fact] = what + " needs the repository owner's token: the server rejected the one given (HTTP 401)"
	default:
		p.f.Unread[fact] = what + " needs the repository owner's token: the token given as the owner's is not theirs"
	}
}

// learn notes site admins among members and returns their logins.
func (p *postureRead) learn(members []port.Member) []string {
	out := make([]string, 0, len(members))
	for _, m := range members {
		out = append(out, m.Login)
		if m.SiteAdmin {
			p.admins[m.Login] = true
		}
	}
	return out
}

// users reads a paged user list; path has no query.
func (c *Client) users(ctx context.Context, path string) ([]port.Member, error) {
	var out []port.Member
	for page := 1; page <= maxPages; page++ {
		var us []apiUser
		if err := c.do(ctx, http.MethodGet, fmt.Sprintf("%s?limit=%d&page=%d", path, PageSize, page), nil, &us); err != nil {
			return nil, err
		}
		for _, u := range us {
			out = append(out, port.Member{Login: u.Login, SiteAdmin: u.IsAdmin})
		}
		if len(us) < PageSize {
			return out, nil
		}
	}
	return nil, fmt.Errorf("forge: %s: no end after %d pages", path, maxPages)
}

// teams reads units and members; a user's repository has none (405).
func (p *postureRead) teams(ctx context.Context) error {
	var ts []apiTeam
	err := p.c.do(ctx, http.MethodGet, p.c.repoPath()+"/teams", nil, &ts)
	var he *HTTPError
	if errors.As(err, &he) && he.Status == http.StatusMethodNotAllowed {
		return nil
	}
	if err != nil {
		return err
	}
	p.f.OwnerIsOrg = true
	for _, t := range ts {
		team := posture.Team{Name: t.Name, Permission: posture.ParseMode(t.Permission), Units: map[string]posture.Mode{}}
		for u, m := range t.UnitsMap {
			team.Units[u] = posture.ParseMode(m)
		}
		members, err := p.admin.TeamMembers(ctx, t.ID)
		if refused(err) {
			p.unread(posture.FactAccounts, "reading the members of team "+t.Name, err)
			continue
		}
		if err != nil {
			return err
		}
		team.Members = p.learn(members)
		p.f.Teams = append(p.f.Teams, team)
	}
	return nil
}

// collaborators reads modes; Gitea gives one mode for all units.
func (p *postureRead) collaborators(ctx context.Context) error {
	members, err := p.c.users(ctx, p.c.repoPath()+"/collaborators")
	if err != nil {
		return err
	}
	logins := p.learn(members)
	for i, login := range logins {
		perm, err := p.admin.Permission(ctx, login)
		if refused(err) {
			p.unread(posture.FactAccounts, "reading a collaborator's permission", err)
			p.f.Listed = logins[i:]
			return nil
		}
		if err != nil {
			return err
		}
		p.f.Collaborators = append(p.f.Collaborators, posture.Collaborator{Login: login, Permission: posture.ParseMode(perm)})
	}
	return nil
}

// workflows reads the default branch's workflow states, then each file.
func (p *postureRead) workflows(ctx context.Context) error {
	var list struct {
		Workflows []struct {
			Path  string `json:"path"`
			State string `json:"state"`
		} `json:"workflows"`
	}
	err := p.c.do(ctx, http.MethodGet, p.c.repoPath()+"/actions/workflows", nil, &list)
	if refused(err) {
		p.f.Unread[posture.FactWorkflows] = "the token may not list the repository's workflows (Actions read): " + err.Error()
		return nil
	}
	if err != nil {
		return err
	}
	for _, w := range list.Workflows {
		data, err := p.c.File(ctx, w.Path, MaxWorkflowBytes)
		if errors.Is(err, issues.ErrTooLarge) {
			continue // not a workflow the guard's init wrote, nor one Gitea reads well
		}
		if err != nil {
			return err
		}
		p.f.Workflows = append(p.f.Workflows, posture.Workflow{Path: w.Path, Disabled: w.State != "active", Content: data})
	}
	return nil
}

// branch reads required checks (anyone who reads code may), then push
// settings (owner only).
func (p *postureRead) branch(ctx context.Context) error {
	b, err := p.admin.Branch(ctx, p.f.DefaultBranch)
	var adminErr error
	if refused(err) && p.given {
		// The owner's token may not; the given one reads the rest.
		adminErr = err
		b, err = p.c.Branch(ctx, p.f.DefaultBranch)
	}
	if err != nil {
		return err
	}
	pr := &p.f.Branch
	pr.Protected, pr.StatusCheck, pr.Contexts = b.Protected, b.StatusCheck, b.Contexts
	if !b.Protected {
		return nil
	}
	if b.Rule == "" {
		p.unread(posture.FactPush, "reading the branch protection's push settings", adminErr)
		return nil
	}
	rule, found, err := p.admin.BranchRuleNamed(ctx, b.Rule)
	if refused(err) || err == nil && !found {
		p.unread(posture.FactPush, "reading the branch protection's push settings", err)
		return nil
	}
	if err != nil {
		return err
	}
	pr.PushKnown, pr.Push, pr.PushWhitelist, pr.PushUsers, pr.PushTeams = true, rule.Push, rule.PushWhitelist, rule.PushUsers, rule.PushTeams
	return nil
}

// secrets reads the names of the repository's Actions secrets.
func (p *postureRead) secrets(ctx context.Context) error {
	names, err := p.admin.SecretNames(ctx)
	if refused(err) {
		p.unread(posture.FactSecrets, "reading the names of the repository's secrets", err)
		return nil
	}
	p.f.Secrets = append(p.f.Secrets, names...)
	return err
}

// SecretNames are upper-cased, shown only to owner or admin.
func (c *Client) SecretNames(ctx context.Context) ([]string, error) {
	var out []string
	for page := 1; page <= maxPages; page++ {
		var ss []struct {
			Name string `json:"name"`
		}
		if err := c.do(ctx, http.MethodGet, fmt.Sprintf("%s/actions/secrets?limit=%d&page=%d", c.repoPath(), PageSize, page), nil, &ss); err != nil {
			return nil, err
		}
		for _, s := range ss {
			out = append(out, s.Name)
		}
		if len(ss) < PageSize {
			return out, nil
		}
	}
	return nil, fmt.Errorf("forge: secrets: no end after %d pages", maxPages)
}
