package fakeforge

import (
	"cmp"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/posture"
)

// IsRepoAdmin says user is a repository admin (or its owner): asked of
// Permission.
func (c *Client) IsRepoAdmin(ctx context.Context, user string) (bool, error) {
	p, err := c.Permission(ctx, user)
	return p == "admin" || p == "owner", err
}

// Permission is user's permission: answered to an admin, and to a user
// about themselves (403 to others); one request. As Gitea's
// collaborators/{user}/permission, it is the permission granted: a
// team's units do not raise it.
func (c *Client) Permission(_ context.Context, user string) (string, error) {
	path := fmt.Sprintf("%s/collaborators/%s/permission", c.s.repoPath(), user)
	if err := c.begin("Permission", http.MethodGet, path); err != nil {
		return "", err
	}
	defer c.s.mu.Unlock()
	if user != c.user {
		if err := c.need("admin", http.MethodGet, path); err != nil {
			return "", err
		}
	}
	return c.s.permission(user), nil
}

// Variable reads an Actions variable (an admin's): one request.
func (c *Client) Variable(_ context.Context, name string) (string, bool, error) {
	path := c.s.repoPath() + "/actions/variables/" + name
	if err := c.begin("Variable", http.MethodGet, path); err != nil {
		return "", false, err
	}
	defer c.s.mu.Unlock()
	if err := c.need("admin", http.MethodGet, path); err != nil {
		return "", false, err
	}
	v, ok := c.s.variables[name]
	return v, ok, nil
}

// SetVariable writes an Actions variable (an admin's): one request.
func (c *Client) SetVariable(_ context.Context, name, value string, _ bool) error {
	path := c.s.repoPath() + "/actions/variables/" + name
	if err := c.begin("SetVariable", http.MethodPut, path); err != nil {
		return err
	}
	defer c.s.mu.Unlock()
	err := c.need("admin", http.MethodPut, path)
	if err == nil {
		err = c.carry(http.MethodPut, path, value)
	}
	if err != nil {
		return err
	}
	c.s.variables[name] = value
	c.s.write(c, "SetVariable", 0, 0, name+"="+value)
	return nil
}

// Labels lists the repository's labels: a request per page.
func (c *Client) Labels(context.Context) ([]port.RepoLabel, error) {
	if err := c.begin("Labels", http.MethodGet, c.s.repoPath()+"/labels"); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	c.more(len(c.s.labels) / forge.PageSize)
	return slices.Clone(c.s.labels), nil
}

// specFor is the spec of label name among specs (a bare name when none).
func specFor(name string, specs []issues.LabelSpec) issues.LabelSpec {
	if i := slices.IndexFunc(specs, func(s issues.LabelSpec) bool { return s.Name == name }); i >= 0 {
		return specs[i]
	}
	return issues.LabelSpec{Name: name}
}

// createLabel creates a repository label (the lock held).
func (s *Server) createLabel(c *Client, spec issues.LabelSpec) port.RepoLabel {
	s.nextID++
	l := port.RepoLabel{ID: s.nextID, Name: spec.Name, Color: cmp.Or(strings.TrimPrefix(spec.Color, "#"), forge.DefaultLabelColor), Description: spec.Description}
	s.labels = append(s.labels, l)
	s.write(c, "CreateLabel", 0, l.ID, l.Name)
	return l
}

// CreateLabel creates a repository label (a writer's): one request.
func (c *Client) CreateLabel(_ context.Context, spec issues.LabelSpec) (port.RepoLabel, error) {
	path := c.s.repoPath() + "/labels"
	if err := c.begin("CreateLabel", http.MethodPost, path); err != nil {
		return port.RepoLabel{}, err
	}
	defer c.s.mu.Unlock()
	if err := c.need("write", http.MethodPost, path); err != nil {
		return port.RepoLabel{}, err
	}
	return c.s.createLabel(c, spec), nil
}

// CreateLabels creates the labels of specs the repository lacks and
// answers them all: a request to list, one a label created.
func (c *Client) CreateLabels(_ context.Context, specs []issues.LabelSpec) ([]issues.Label, error) {
	path := c.s.repoPath() + "/labels"
	if err := c.begin("CreateLabels", http.MethodGet, path); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	for _, spec := range specs {
		if slices.ContainsFunc(c.s.labels, func(l port.RepoLabel) bool { return l.Name == spec.Name }) {
			continue
		}
		if err := c.need("write", http.MethodPost, path); err != nil {
			return nil, err
		}
		c.more(1)
		c.s.createLabel(c, spec)
	}
	out := make([]issues.Label, 0, len(c.s.labels))
	for _, l := range c.s.labels {
		out = append(out, issues.Label{ID: l.ID, Name: l.Name})
	}
	return out, nil
}

// ListIssues reads a page of the repository's issues (not its pull
// requests), newest first: one request.
func (c *Client) ListIssues(_ context.Context, q port.IssueQuery) (port.IssuePage, error) {
	if err := c.begin("ListIssues", http.MethodGet, c.s.repoPath()+"/issues"); err != nil {
		return port.IssuePage{}, err
	}
	defer c.s.mu.Unlock()
	q.Page, q.State = max(q.Page, 1), cmp.Or(q.State, "open")
	nums := c.s.numbers()
	var sel []*issue
	for _, n := range slices.Backward(nums) {
		is := c.s.issues[n]
		if is.is.IsPull || q.State != "all" && q.State != is.is.State || q.CreatedBy != "" && q.CreatedBy != is.author {
			continue
		}
		sel = append(sel, is)
	}
	from := min((q.Page-1)*forge.PageSize, len(sel))
	to := min(from+forge.PageSize, len(sel))
	page := port.IssuePage{Authors: map[int64]string{}, Total: len(sel), Last: to >= len(sel)}
	for _, is := range sel[from:to] {
		page.Issues = append(page.Issues, is.view())
		page.Authors[is.is.Number] = is.author
	}
	return page, nil
}

// CreateIssue opens an issue as the client's user: one request.
func (c *Client) CreateIssue(_ context.Context, title, body string) (issues.Issue, error) {
	path := c.s.repoPath() + "/issues"
	if err := c.begin("CreateIssue", http.MethodPost, path); err != nil {
		return issues.Issue{}, err
	}
	defer c.s.mu.Unlock()
	if err := c.carry(http.MethodPost, path, title, body); err != nil {
		return issues.Issue{}, err
	}
	n := c.s.addIssue(issues.Issue{Title: title, Body: body}, c.user)
	c.s.write(c, "CreateIssue", n, 0, body)
	c.s.notify(c.user, "opened", c.s.issues[n], nil)
	return c.s.issues[n].view(), nil
}

// EditIssue changes an issue's title, body or state (a writer's, or its
// author's): one request.
func (c *Client) EditIssue(_ context.Context, n int64, e port.IssueEdit) (issues.Issue, error) {
	path := c.s.issuePath(n)
	if err := c.begin("EditIssue", http.MethodPatch, path); err != nil {
		return issues.Issue{}, err
	}
	defer c.s.mu.Unlock()
	is, err := c.find(n, http.MethodPatch)
	if err == nil && is.author != c.user {
		err = c.need("write", http.MethodPatch, path)
	}
	if err == nil {
		err = c.carry(http.MethodPatch, path, deref(e.Title), deref(e.Body))
	}
	if err != nil {
		return issues.Issue{}, err
	}
	if e.Title != nil && *e.Title != is.is.Title {
		is.titles = append(is.titles, issues.TitleChange{Old: is.is.Title, New: *e.Title, Actor: c.user, At: c.s.now()})
		is.is.Title = *e.Title
	}
	if e.Body != nil {
		c.s.editBody(is, *e.Body, c.user)
	}
	if e.State != nil && *e.State != is.is.State {
		is.is.State = *e.State
		c.s.notify(c.user, map[string]string{"closed": "closed", "open": "reopened"}[*e.State], is, nil)
	}
	c.s.write(c, "EditIssue", n, 0, deref(e.State)+" "+deref(e.Body))
	if e.Title != nil || e.Body != nil {
		c.s.notify(c.user, "edited", is, nil)
	}
	return is.view(), nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Workflows lists the default branch's workflows (Server.Workflows): one
// request.
func (c *Client) Workflows(context.Context) ([]port.Workflow, error) {
	if err := c.begin("Workflows", http.MethodGet, c.s.repoPath()+"/actions/workflows"); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	return slices.Clone(c.s.Workflows), nil
}

// Repository reads the repository: one request.
func (c *Client) Repository(context.Context) (port.Repository, error) {
	if err := c.begin("Repository", http.MethodGet, c.s.repoPath()); err != nil {
		return port.Repository{}, err
	}
	defer c.s.mu.Unlock()
	s := c.s
	return port.Repository{ID: s.repoID, FullName: s.Repo(), HTMLURL: URL + "/" + s.Repo(), DefaultBranch: s.DefaultBranch,
		Empty: s.Empty, Archived: s.Archived, CanPush: s.may(c.user, "write")}, nil
}

// PostureFacts answers Server.Facts, with the repository, its owner and
// its default branch: one request (whatever admin may read).
func (c *Client) PostureFacts(_ context.Context, _ port.PostureAdmin, branch, _ string) (posture.Facts, error) {
	if err := c.begin("PostureFacts", http.MethodGet, c.s.repoPath()+"/teams"); err != nil {
		return posture.Facts{}, err
	}
	defer c.s.mu.Unlock()
	f := c.s.Facts
	f.Repo, f.Owner, f.DefaultBranch, f.OwnerIsOrg = c.s.Repo(), c.s.owner, branch, c.s.Org
	if f.Unread == nil {
		f.Unread = map[string]string{}
	}
	return f, nil
}

// team is the organisation's team id, or a 404 (the lock held).
func (s *Server) team(id int64, verb, path string) (*team, error) {
	if i := slices.IndexFunc(s.teams, func(t *team) bool { return t.ID == id }); i >= 0 && s.Org {
		return s.teams[i], nil
	}
	return nil, notFound(verb, path)
}

// inTeam refuses (403) a user neither in team t nor an admin, as Gitea
// answers a team's reads.
func (c *Client) inTeam(t *team, verb, path string) error {
	if slices.Contains(t.members, c.user) {
		return nil
	}
	return c.need("admin", verb, path)
}

// visibleTeam is team id as a member or an admin reads it at path (the
// lock held).
func (c *Client) visibleTeam(id int64, path string) (*team, error) {
	t, err := c.s.team(id, http.MethodGet, path)
	if err == nil {
		err = c.inTeam(t, http.MethodGet, path)
	}
	return t, err
}

// TeamMembers lists a team's members (a member's or an admin's): one
// request.
func (c *Client) TeamMembers(_ context.Context, id int64) ([]port.Member, error) {
	path := fmt.Sprintf("/teams/%d/members", id)
	if err := c.begin("TeamMembers", http.MethodGet, path); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	t, err := c.visibleTeam(id, path)
	if err != nil {
		return nil, err
	}
	var out []port.Member
	for _, m := range t.members {
		out = append(out, port.Member{Login: m})
	}
	return out, nil
}

// Branch reads a branch's protection: one request.
func (c *Client) Branch(_ context.Context, name string) (port.Branch, error) {
	path := c.s.repoPath() + "/branches/" + name
	if err := c.begin("Branch", http.MethodGet, path); err != nil {
		return port.Branch{}, err
	}
	defer c.s.mu.Unlock()
	if c.s.branches[name] == nil {
		return port.Branch{}, notFound(http.MethodGet, path)
	}
	r, ok := c.s.rules[name]
	if !ok {
		return port.Branch{}, nil
	}
	return port.Branch{Protected: true, StatusCheck: r.StatusCheck, Contexts: slices.Clone(r.Contexts), Rule: r.Name}, nil
}

// BranchRuleNamed reads a protection rule (an admin's): one request.
func (c *Client) BranchRuleNamed(_ context.Context, name string) (port.BranchRule, bool, error) {
	path := c.s.repoPath() + "/branch_protections/" + name
	if err := c.begin("BranchRuleNamed", http.MethodGet, path); err != nil {
		return port.BranchRule{}, false, err
	}
	defer c.s.mu.Unlock()
	if err := c.need("admin", http.MethodGet, path); err != nil {
		return port.BranchRule{}, false, err
	}
	r, ok := c.s.rules[name]
	return r, ok, nil
}

// SecretNames are the Actions secrets' names (an admin's): one request.
func (c *Client) SecretNames(context.Context) ([]string, error) {
	path := c.s.repoPath() + "/actions/secrets"
	if err := c.begin("SecretNames", http.MethodGet, path); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	if err := c.need("admin", http.MethodGet, path); err != nil {
		return nil, err
	}
	return slices.Clone(c.s.Secrets), nil
}

// blob is a file's id, as the contents API names it.
func blob(data []byte) string {
	sum := sha1.Sum(data)
	return hex.EncodeToString(sum[:])
}

// FileAt reads a file of ref ("" is the default branch): one request.
func (c *Client) FileAt(_ context.Context, ref, path string, most int64) (port.RepoFile, error) {
	if err := c.begin("FileAt", http.MethodGet, c.s.repoPath()+"/contents/"+path); err != nil {
		return port.RepoFile{}, err
	}
	defer c.s.mu.Unlock()
	data, err := c.s.read(cmp.Or(ref, c.s.DefaultBranch), path, most)
	if err != nil {
		return port.RepoFile{}, err
	}
	return port.RepoFile{Path: path, Content: data, SHA: blob(data)}, nil
}

// BranchExists says the branch exists: one request.
func (c *Client) BranchExists(_ context.Context, name string) (bool, error) {
	if err := c.begin("BranchExists", http.MethodGet, c.s.repoPath()+"/branches/"+name); err != nil {
		return false, err
	}
	defer c.s.mu.Unlock()
	return c.s.branches[name] != nil, nil
}

// CommitFiles writes the files as one commit (a writer's): onto Branch,
// or onto NewBranch made from it. One request.
func (c *Client) CommitFiles(_ context.Context, cm port.Commit) (string, error) {
	path := c.s.repoPath() + "/contents"
	if err := c.begin("CommitFiles", http.MethodPost, path); err != nil {
		return "", err
	}
	defer c.s.mu.Unlock()
	s := c.s
	if err := c.need("write", http.MethodPost, path); err != nil {
		return "", err
	}
	from := s.branches[cmp.Or(cm.Branch, s.DefaultBranch)]
	target := cmp.Or(cm.Branch, s.DefaultBranch)
	switch {
	case from == nil && !s.Empty:
		return "", notFound(http.MethodPost, path)
	case cm.NewBranch != "" && s.branches[cm.NewBranch] != nil:
		return "", status(http.MethodPost, path, http.StatusUnprocessableEntity)
	case cm.NewBranch != "":
		target = cm.NewBranch
		s.branches[target] = maps.Clone(from)
	case from == nil:
		s.branches[target] = map[string][]byte{}
	}
	var paths []string
	for _, f := range cm.Files {
		if old, exists := s.branches[target][f.Path]; exists && f.SHA != blob(old) {
			return "", status(http.MethodPost, path, http.StatusUnprocessableEntity)
		}
		s.branches[target][f.Path] = f.Content
		paths = append(paths, f.Path)
	}
	s.Empty = false
	s.write(c, "CommitFiles", 0, 0, target+": "+strings.Join(paths, " "))
	s.heads[target] = blob([]byte(s.heads[target] + target + strings.Join(paths, " ")))
	return s.heads[target], nil
}

// OpenPull finds the open pull request from head into base: one request.
func (c *Client) OpenPull(_ context.Context, head, base string) (port.Pull, bool, error) {
	if err := c.begin("OpenPull", http.MethodGet, c.s.repoPath()+"/pulls"); err != nil {
		return port.Pull{}, false, err
	}
	defer c.s.mu.Unlock()
	for _, n := range c.s.numbers() {
		if is := c.s.issues[n]; is.is.IsPull && is.is.State == "open" && is.head == head && is.base == base {
			return is.pull(c.s), true, nil
		}
	}
	return port.Pull{}, false, nil
}

// CreatePull opens a pull request from head into base (a writer's): one
// request.
func (c *Client) CreatePull(_ context.Context, head, base, title, body string) (port.Pull, error) {
	path := c.s.repoPath() + "/pulls"
	if err := c.begin("CreatePull", http.MethodPost, path); err != nil {
		return port.Pull{}, err
	}
	defer c.s.mu.Unlock()
	s := c.s
	err := c.need("write", http.MethodPost, path)
	if err == nil {
		err = c.carry(http.MethodPost, path, title, body)
	}
	if err != nil {
		return port.Pull{}, err
	}
	if s.branches[head] == nil || s.branches[base] == nil {
		return port.Pull{}, notFound(http.MethodPost, path)
	}
	var changed []string
	for p, data := range s.branches[head] {
		if old, ok := s.branches[base][p]; !ok || string(old) != string(data) {
			changed = append(changed, p)
		}
	}
	slices.Sort(changed)
	n := s.addIssue(issues.Issue{Title: title, Body: body, IsPull: true}, c.user)
	is := s.issues[n]
	is.head, is.base, is.files = head, base, changed
	s.write(c, "CreatePull", n, 0, head+"→"+base+": "+body)
	return is.pull(s), nil
}

// OwnerIsOrg says the owner is an organisation (Server.Org): one request.
func (c *Client) OwnerIsOrg(context.Context) (bool, error) {
	if err := c.begin("OwnerIsOrg", http.MethodGet, "/orgs/"+c.s.owner); err != nil {
		return false, err
	}
	defer c.s.mu.Unlock()
	return c.s.Org, nil
}

// OrgTeams lists the organisation's teams: one request.
func (c *Client) OrgTeams(context.Context) ([]port.Team, error) {
	path := "/orgs/" + c.s.owner + "/teams"
	if err := c.begin("OrgTeams", http.MethodGet, path); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	if !c.s.Org {
		return nil, notFound(http.MethodGet, path)
	}
	var out []port.Team
	for _, t := range c.s.teams {
		out = append(out, t.Team)
	}
	return out, nil
}

// CreateTeam creates a team of the organisation (an admin's): one
// request.
func (c *Client) CreateTeam(_ context.Context, name, _ string, units map[string]string) (port.Team, error) {
	path := "/orgs/" + c.s.owner + "/teams"
	if err := c.begin("CreateTeam", http.MethodPost, path); err != nil {
		return port.Team{}, err
	}
	defer c.s.mu.Unlock()
	s := c.s
	if err := c.need("admin", http.MethodPost, path); err != nil {
		return port.Team{}, err
	}
	if !s.Org {
		return port.Team{}, notFound(http.MethodPost, path)
	}
	s.nextID++
	t := port.Team{ID: s.nextID, Name: name, Units: maps.Clone(units)}
	s.teams = append(s.teams, &team{Team: t})
	s.write(c, "CreateTeam", 0, t.ID, name)
	return t, nil
}

// TeamHasRepo says the team has the repository (a member's or an
// admin's question): one request.
func (c *Client) TeamHasRepo(_ context.Context, id int64) (bool, error) {
	path := fmt.Sprintf("/teams/%d/repos/%s", id, c.s.Repo())
	if err := c.begin("TeamHasRepo", http.MethodGet, path); err != nil {
		return false, err
	}
	defer c.s.mu.Unlock()
	t, err := c.visibleTeam(id, path)
	if err != nil {
		return false, err
	}
	return t.hasRepo, nil
}

// AddTeamRepo gives the team the repository (an admin's): one request.
func (c *Client) AddTeamRepo(_ context.Context, id int64) error {
	path := fmt.Sprintf("/teams/%d/repos/%s", id, c.s.Repo())
	if err := c.begin("AddTeamRepo", http.MethodPut, path); err != nil {
		return err
	}
	defer c.s.mu.Unlock()
	t, err := c.s.team(id, http.MethodPut, path)
	if err == nil {
		err = c.need("admin", http.MethodPut, path)
	}
	if err != nil {
		return err
	}
	t.hasRepo = true
	c.s.write(c, "AddTeamRepo", 0, id, t.Name)
	return nil
}

// AddTeamMember adds login to the team (an admin's): one request.
func (c *Client) AddTeamMember(_ context.Context, id int64, login string) error {
	path := fmt.Sprintf("/teams/%d/members/%s", id, login)
	if err := c.begin("AddTeamMember", http.MethodPut, path); err != nil {
		return err
	}
	defer c.s.mu.Unlock()
	t, err := c.s.team(id, http.MethodPut, path)
	if err == nil {
		err = c.need("admin", http.MethodPut, path)
	}
	if err != nil {
		return err
	}
	if !slices.Contains(t.members, login) {
		t.members = append(t.members, login)
	}
	c.s.write(c, "AddTeamMember", 0, id, login)
	return nil
}

// ProtectBranch creates a protection rule (an admin's): one request.
func (c *Client) ProtectBranch(_ context.Context, r port.BranchRule) error {
	path := c.s.repoPath() + "/branch_protections"
	if err := c.begin("ProtectBranch", http.MethodPost, path); err != nil {
		return err
	}
	defer c.s.mu.Unlock()
	if err := c.need("admin", http.MethodPost, path); err != nil {
		return err
	}
	c.s.rules[r.Name] = port.BranchRule{Name: r.Name, Push: r.Push, StatusCheck: r.StatusCheck, Contexts: slices.Clone(r.Contexts)}
	c.s.write(c, "ProtectBranch", 0, 0, r.Name+": "+strings.Join(r.Contexts, ", "))
	return nil
}

// RequireChecks makes rule name wait for contexts (an admin's): one
// request.
func (c *Client) RequireChecks(_ context.Context, name string, contexts []string) error {
	path := c.s.repoPath() + "/branch_protections/" + name
	if err := c.begin("RequireChecks", http.MethodPatch, path); err != nil {
		return err
	}
	defer c.s.mu.Unlock()
	if err := c.need("admin", http.MethodPatch, path); err != nil {
		return err
	}
	r, ok := c.s.rules[name]
	if !ok {
		return notFound(http.MethodPatch, path)
	}
	r.StatusCheck, r.Contexts = true, slices.Clone(contexts)
	c.s.rules[name] = r
	c.s.write(c, "RequireChecks", 0, 0, name+": "+strings.Join(contexts, ", "))
	return nil
}
