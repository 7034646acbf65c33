package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/posture"
)

// This file holds the reads of a repository's posture (`gns-guard doctor`
// and the action's posture check, docs/contract.md#4b-the-trusted-ledger-its-anchor-and-approvals):
// who has which unit, the workflows of the default branch, its protection
// and the secrets' names. Some of them Gitea answers only to the
// repository's owner (the secrets, a team's members, a collaborator's
// permission, the protection's push settings): they are read with the
// admin client, and a refusal becomes a fact left unread, never an error.

// MaxWorkflowBytes bounds what the posture reads of a workflow file.
const MaxWorkflowBytes = 256 << 10

// apiTeam is a team as GET /repos/{o}/{r}/teams lists it.
type apiTeam struct {
	ID         int64             `json:"id"`
	Name       string            `json:"name"`
	Permission string            `json:"permission"`
	UnitsMap   map[string]string `json:"units_map"`
}

// apiUser is a user as Gitea lists it; is_admin is shown only to site
// admins (and the user itself).
type apiUser struct {
	Login   string `json:"login"`
	IsAdmin bool   `json:"is_admin"`
}

// PostureFacts reads the posture of the client's repository, whose default
// branch is branch: the teams and collaborators (with their modes), the
// workflows of the branch, its protection and the secrets' names. admin
// (nil: the client itself) reads what only the owner may; when it may
// not, the fact is left unread with hint (how to give an owner's token).
// The settings file's facts (budget-admins, ledger-public-key) are the
// caller's.
func (c *Client) PostureFacts(ctx context.Context, admin *Client, branch, hint string) (posture.Facts, error) {
	if admin == nil {
		admin = c
	}
	f := posture.Facts{Repo: c.owner + "/" + c.repo, Owner: c.owner, DefaultBranch: branch, Unread: map[string]string{}}
	p := &postureRead{c: c, admin: admin, f: &f, hint: hint, admins: map[string]bool{}}
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
	c, admin *Client
	f        *posture.Facts
	hint     string
	admins   map[string]bool // site admins seen in the lists
}

// refused says a read was refused for want of rights: the fact is then
// left unread.
func refused(err error) bool {
	return errors.Is(err, issues.ErrForbidden) || errors.Is(err, issues.ErrNotFound) || errors.Is(err, issues.ErrUnauthorized)
}

// unread leaves fact unread, saying what needs an owner's token.
func (p *postureRead) unread(fact, what string) {
	p.f.Unread[fact] = what + " needs the repository owner's token (" + p.hint + ")"
}

// users reads a paged list of users at path (path has no query).
func (p *postureRead) users(ctx context.Context, c *Client, path string) ([]string, error) {
	var out []string
	for page := 1; page <= maxPages; page++ {
		var us []apiUser
		if err := c.do(ctx, http.MethodGet, fmt.Sprintf("%s?limit=%d&page=%d", path, PageSize, page), nil, &us); err != nil {
			return nil, err
		}
		for _, u := range us {
			out = append(out, u.Login)
			if u.IsAdmin {
				p.admins[u.Login] = true
			}
		}
		if len(us) < PageSize {
			return out, nil
		}
	}
	return nil, fmt.Errorf("forge: %s: no end after %d pages", path, maxPages)
}

// teams reads the repository's teams, their units and their members. A
// repository a user owns has none (Gitea answers 405).
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
		members, err := p.users(ctx, p.admin, "/teams/"+strconv.FormatInt(t.ID, 10)+"/members")
		if refused(err) {
			p.unread(posture.FactAccounts, "reading the members of team "+t.Name)
			continue
		}
		if err != nil {
			return err
		}
		team.Members = members
		p.f.Teams = append(p.f.Teams, team)
	}
	return nil
}

// collaborators reads the collaborators and the mode of each (Gitea gives
// a collaborator its one mode on every unit).
func (p *postureRead) collaborators(ctx context.Context) error {
	logins, err := p.users(ctx, p.c, p.c.repoPath()+"/collaborators")
	if err != nil {
		return err
	}
	for _, login := range logins {
		var perm struct {
			Permission string `json:"permission"`
		}
		err := p.admin.do(ctx, http.MethodGet, p.c.repoPath()+"/collaborators/"+url.PathEscape(login)+"/permission", nil, &perm)
		if refused(err) {
			p.unread(posture.FactAccounts, "reading a collaborator's permission")
			return nil
		}
		if err != nil {
			return err
		}
		p.f.Collaborators = append(p.f.Collaborators, posture.Collaborator{Login: login, Permission: posture.ParseMode(perm.Permission)})
	}
	return nil
}

// workflows reads the default branch's workflows: their state, then each
// file.
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

// branch reads the default branch's protection: the required checks
// (anyone who reads the code sees them), then the push settings of its
// rule (the owner only).
func (p *postureRead) branch(ctx context.Context) error {
	var b struct {
		Protected         bool     `json:"protected"`
		EnableStatusCheck bool     `json:"enable_status_check"`
		Contexts          []string `json:"status_check_contexts"`
		Rule              string   `json:"effective_branch_protection_name"`
	}
	if err := p.admin.do(ctx, http.MethodGet, p.c.repoPath()+"/branches/"+url.PathEscape(p.f.DefaultBranch), nil, &b); err != nil {
		return err
	}
	pr := &p.f.Branch
	pr.Protected, pr.StatusCheck, pr.Contexts = b.Protected, b.EnableStatusCheck, b.Contexts
	if !b.Protected {
		return nil
	}
	if b.Rule == "" {
		p.unread(posture.FactPush, "reading the branch protection's push settings")
		return nil
	}
	var rule struct {
		EnablePush          bool     `json:"enable_push"`
		EnablePushWhitelist bool     `json:"enable_push_whitelist"`
		PushUsers           []string `json:"push_whitelist_usernames"`
		PushTeams           []string `json:"push_whitelist_teams"`
	}
	err := p.admin.do(ctx, http.MethodGet, p.c.repoPath()+"/branch_protections/"+url.PathEscape(b.Rule), nil, &rule)
	if refused(err) {
		p.unread(posture.FactPush, "reading the branch protection's push settings")
		return nil
	}
	if err != nil {
		return err
	}
	pr.PushKnown, pr.Push, pr.PushWhitelist, pr.PushUsers, pr.PushTeams = true, rule.EnablePush, rule.EnablePushWhitelist, rule.PushUsers, rule.PushTeams
	return nil
}

// secrets reads the names of the repository's Actions secrets.
func (p *postureRead) secrets(ctx context.Context) error {
	for page := 1; page <= maxPages; page++ {
		var ss []struct {
			Name string `json:"name"`
		}
		err := p.admin.do(ctx, http.MethodGet, fmt.Sprintf("%s/actions/secrets?limit=%d&page=%d", p.c.repoPath(), PageSize, page), nil, &ss)
		if refused(err) {
			p.unread(posture.FactSecrets, "reading the names of the repository's secrets")
			return nil
		}
		if err != nil {
			return err
		}
		for _, s := range ss {
			p.f.Secrets = append(p.f.Secrets, s.Name)
		}
		if len(ss) < PageSize {
			return nil
		}
	}
	return fmt.Errorf("forge: secrets: no end after %d pages", maxPages)
}

// Permission is user's access to the repository as the server answers a
// repository admin: "none", "read", "write", "admin" or "owner". One GET;
// others get an error wrapping issues.ErrForbidden.
func (c *Client) Permission(ctx context.Context, user string) (string, error) {
	var p struct {
		Permission string `json:"permission"`
	}
	path := fmt.Sprintf("/repos/%s/%s/collaborators/%s/permission", url.PathEscape(c.owner), url.PathEscape(c.repo), url.PathEscape(user))
	if err := c.do(ctx, http.MethodGet, path, nil, &p); err != nil {
		return "", err
	}
	return p.Permission, nil
}
