package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/port"
)

// `gns-guard init`'s posture writes: an organisation's agents team, and
// branch protection requiring the guard's check.

// OwnerIsOrg says the repository's owner is an organisation: one GET.
func (c *Client) OwnerIsOrg(ctx context.Context) (bool, error) {
	err := c.do(ctx, http.MethodGet, "/orgs/"+url.PathEscape(c.owner), nil, nil)
	if errors.Is(err, issues.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// OrgTeams lists the teams of the repository's organisation.
func (c *Client) OrgTeams(ctx context.Context) ([]port.Team, error) {
	var out []port.Team
	for page := 1; page <= maxPages; page++ {
		var ts []apiTeam
		if err := c.do(ctx, http.MethodGet, fmt.Sprintf("/orgs/%s/teams?limit=%d&page=%d", url.PathEscape(c.owner), PageSize, page), nil, &ts); err != nil {
			return nil, err
		}
		for _, t := range ts {
			out = append(out, port.Team{ID: t.ID, Name: t.Name, Units: t.UnitsMap})
		}
		if len(ts) < PageSize {
			return out, nil
		}
	}
	return nil, fmt.Errorf("forge: teams of %s: no end after %d pages", c.owner, maxPages)
}

// CreateTeam gives a mode per unit, on the given repositories only: one
// POST.
func (c *Client) CreateTeam(ctx context.Context, name, description string, units map[string]string) (port.Team, error) {
	var t apiTeam
	in := map[string]any{"name": name, "description": description, "includes_all_repositories": false, "units_map": units}
	if err := c.do(ctx, http.MethodPost, "/orgs/"+url.PathEscape(c.owner)+"/teams", in, &t); err != nil {
		return port.Team{}, err
	}
	return port.Team{ID: t.ID, Name: t.Name, Units: t.UnitsMap}, nil
}

func teamPath(id int64) string { return "/teams/" + strconv.FormatInt(id, 10) }

// TeamHasRepo: one GET.
func (c *Client) TeamHasRepo(ctx context.Context, id int64) (bool, error) {
	err := c.do(ctx, http.MethodGet, teamPath(id)+"/repos/"+url.PathEscape(c.owner)+"/"+url.PathEscape(c.repo), nil, nil)
	if errors.Is(err, issues.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// AddTeamRepo gives the team access to the repository: one PUT.
func (c *Client) AddTeamRepo(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodPut, teamPath(id)+"/repos/"+url.PathEscape(c.owner)+"/"+url.PathEscape(c.repo), nil, nil)
}

// TeamMembers reads 50 a request, with a repository admin's token.
func (c *Client) TeamMembers(ctx context.Context, id int64) ([]port.Member, error) {
	return c.users(ctx, teamPath(id)+"/members")
}

// AddTeamMember adds login to the team: one PUT.
func (c *Client) AddTeamMember(ctx context.Context, id int64, login string) error {
	return c.do(ctx, http.MethodPut, teamPath(id)+"/members/"+url.PathEscape(login), nil, nil)
}

type apiRule struct {
	RuleName      string   `json:"rule_name"`
	EnablePush    bool     `json:"enable_push"`
	StatusCheck   bool     `json:"enable_status_check"`
	Contexts      []string `json:"status_check_contexts"`
	PushWhitelist bool     `json:"enable_push_whitelist"`
	PushUsers     []string `json:"push_whitelist_usernames"`
	PushTeams     []string `json:"push_whitelist_teams"`
}

// BranchRuleNamed: one GET, with a repository admin's token.
func (c *Client) BranchRuleNamed(ctx context.Context, name string) (port.BranchRule, bool, error) {
	var r apiRule
	err := c.do(ctx, http.MethodGet, c.repoPath()+"/branch_protections/"+url.PathEscape(name), nil, &r)
	if errors.Is(err, issues.ErrNotFound) {
		return port.BranchRule{}, false, nil
	}
	if err != nil {
		return port.BranchRule{}, false, err
	}
	return port.BranchRule{Name: r.RuleName, Push: r.EnablePush, StatusCheck: r.StatusCheck, Contexts: r.Contexts,
		PushWhitelist: r.PushWhitelist, PushUsers: r.PushUsers, PushTeams: r.PushTeams}, true, nil
}

// Branch: one GET, open to anyone who reads the code.
func (c *Client) Branch(ctx context.Context, name string) (port.Branch, error) {
	var b struct {
		Protected         bool     `json:"protected"`
		EnableStatusCheck bool     `json:"enable_status_check"`
		Contexts          []string `json:"status_check_contexts"`
		Rule              string   `json:"effective_branch_protection_name"`
	}
	if err := c.do(ctx, http.MethodGet, c.repoPath()+"/branches/"+url.PathEscape(name), nil, &b); err != nil {
		return port.Branch{}, err
	}
	return port.Branch{Protected: b.Protected, StatusCheck: b.EnableStatusCheck, Contexts: b.Contexts, Rule: b.Rule}, nil
}

// ProtectBranch sets Name, Push, StatusCheck and Contexts: one POST.
func (c *Client) ProtectBranch(ctx context.Context, r port.BranchRule) error {
	in := map[string]any{"rule_name": r.Name, "enable_push": r.Push, "enable_status_check": r.StatusCheck, "status_check_contexts": r.Contexts}
	return c.do(ctx, http.MethodPost, c.repoPath()+"/branch_protections", in, nil)
}

// RequireChecks adds required contexts, other settings kept: one PATCH.
func (c *Client) RequireChecks(ctx context.Context, name string, contexts []string) error {
	in := map[string]any{"enable_status_check": true, "status_check_contexts": contexts}
	return c.do(ctx, http.MethodPatch, c.repoPath()+"/branch_protections/"+url.PathEscape(name), in, nil)
}
