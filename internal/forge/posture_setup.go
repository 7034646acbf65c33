package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// This file holds the writes `gns-guard init` makes to build the
// recommended posture: the agents' team of an organisation, and the
// default branch's protection with the guard's check required.

// Team is an organisation's team.
type Team struct {
	ID    int64
	Name  string
	Units map[string]string // unit key → mode (units_map)
}

// OwnerIsOrg says the repository's owner is an organisation: one GET.
func (c *Client) OwnerIsOrg(ctx context.Context) (bool, error) {
	err := c.do(ctx, http.MethodGet, "/orgs/"+url.PathEscape(c.owner), nil, nil)
	if errors.Is(err, issues.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// OrgTeams lists the teams of the repository's organisation.
func (c *Client) OrgTeams(ctx context.Context) ([]Team, error) {
	var out []Team
	for page := 1; page <= maxPages; page++ {
		var ts []apiTeam
		if err := c.do(ctx, http.MethodGet, fmt.Sprintf("/orgs/%s/teams?limit=%d&page=%d", url.PathEscape(c.owner), PageSize, page), nil, &ts); err != nil {
			return nil, err
		}
		for _, t := range ts {
			out = append(out, Team{ID: t.ID, Name: t.Name, Units: t.UnitsMap})
		}
		if len(ts) < PageSize {
			return out, nil
		}
	}
	return nil, fmt.Errorf("forge: teams of %s: no end after %d pages", c.owner, maxPages)
}

// CreateTeam creates a team of the organisation with a mode on each unit,
// for the repositories it is given (not all): one POST.
func (c *Client) CreateTeam(ctx context.Context, name, description string, units map[string]string) (Team, error) {
	var t apiTeam
	in := map[string]any{"name": name, "description": description, "includes_all_repositories": false, "units_map": units}
	if err := c.do(ctx, http.MethodPost, "/orgs/"+url.PathEscape(c.owner)+"/teams", in, &t); err != nil {
		return Team{}, err
	}
	return Team{ID: t.ID, Name: t.Name, Units: t.UnitsMap}, nil
}

func teamPath(id int64) string { return "/teams/" + strconv.FormatInt(id, 10) }

// TeamHasRepo says the team has access to the repository: one GET.
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

// TeamMembers lists the team's members.
func (c *Client) TeamMembers(ctx context.Context, id int64) ([]string, error) {
	p := &postureRead{admins: map[string]bool{}}
	return p.users(ctx, c, teamPath(id)+"/members")
}

// AddTeamMember adds login to the team: one PUT.
func (c *Client) AddTeamMember(ctx context.Context, id int64, login string) error {
	return c.do(ctx, http.MethodPut, teamPath(id)+"/members/"+url.PathEscape(login), nil, nil)
}

// BranchRule is a branch protection rule, as far as the guard sets it.
type BranchRule struct {
	Name        string
	Push        bool // pushing is allowed (to everyone with Code write, or a list)
	StatusCheck bool
	Contexts    []string
}

type apiRule struct {
	RuleName    string   `json:"rule_name"`
	EnablePush  bool     `json:"enable_push"`
	StatusCheck bool     `json:"enable_status_check"`
	Contexts    []string `json:"status_check_contexts"`
}

// BranchRuleNamed reads the protection rule name, and false when there is
// none: one GET (a repository admin's token).
func (c *Client) BranchRuleNamed(ctx context.Context, name string) (BranchRule, bool, error) {
	var r apiRule
	err := c.do(ctx, http.MethodGet, c.repoPath()+"/branch_protections/"+url.PathEscape(name), nil, &r)
	if errors.Is(err, issues.ErrNotFound) {
		return BranchRule{}, false, nil
	}
	if err != nil {
		return BranchRule{}, false, err
	}
	return BranchRule{Name: r.RuleName, Push: r.EnablePush, StatusCheck: r.StatusCheck, Contexts: r.Contexts}, true, nil
}

// ProtectBranch creates the rule: one POST.
func (c *Client) ProtectBranch(ctx context.Context, r BranchRule) error {
	in := map[string]any{"rule_name": r.Name, "enable_push": r.Push, "enable_status_check": r.StatusCheck, "status_check_contexts": r.Contexts}
	return c.do(ctx, http.MethodPost, c.repoPath()+"/branch_protections", in, nil)
}

// RequireChecks makes the rule name wait for contexts before merging,
// leaving its other settings: one PATCH.
func (c *Client) RequireChecks(ctx context.Context, name string, contexts []string) error {
	in := map[string]any{"enable_status_check": true, "status_check_contexts": contexts}
	return c.do(ctx, http.MethodPatch, c.repoPath()+"/branch_protections/"+url.PathEscape(name), in, nil)
}
