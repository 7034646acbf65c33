package posture

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// account is what one login may do in the repository: its best mode on
// each unit over its teams and its collaboration, and how it got them.
type account struct {
	login string
	units map[string]Mode
	admin bool
	via   []string
}

// accounts are logins with access, owner aside, sorted.
func accounts(f Facts) []*account {
	byLogin := map[string]*account{}
	get := func(login string) *account {
		key := strings.ToLower(login)
		if a, ok := byLogin[key]; ok {
			return a
		}
		a := &account{login: login, units: map[string]Mode{}}
		byLogin[key] = a
		return a
	}
	for _, c := range f.Collaborators {
		a := get(c.Login)
		a.via = append(a.via, c.Permission.String()+" collaborator")
		for _, u := range []string{Code, Issues, Pulls, Actions} {
			a.units[u] = max(a.units[u], c.Permission)
		}
		a.admin = a.admin || c.Permission >= Admin
	}
	for _, t := range f.Teams {
		for _, m := range t.Members {
			a := get(m)
			a.via = append(a.via, "team "+t.Name)
			a.admin = a.admin || t.Permission >= Admin
			for u, mode := range t.Units {
				a.units[u] = max(a.units[u], mode)
			}
		}
	}
	out := make([]*account, 0, len(byLogin))
	for _, a := range byLogin {
		if a.admin {
			for _, u := range []string{Code, Issues, Pulls, Actions} {
				a.units[u] = Owner
			}
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i].login) < strings.ToLower(out[j].login) })
	return out
}

// trusted says why a login is trusted, or "" when it is not: the owner
// (for an organisation, the members of its Owners team), a site admin, or
// an approver named in budget-admins.
func trusted(f Facts, login string) string {
	eq := func(s string) bool { return strings.EqualFold(s, login) }
	switch {
	case !f.OwnerIsOrg && eq(f.Owner):
		return "the owner"
	case slices.ContainsFunc(f.SiteAdmins, eq):
		return "a site admin"
	case slices.ContainsFunc(f.BudgetAdmins, eq):
		return "in budget-admins"
	}
	for _, t := range f.Teams {
		if t.Name == OwnersTeam && t.Permission == Owner && slices.ContainsFunc(t.Members, eq) {
			return "an owner of " + f.Owner
		}
	}
	return ""
}

// untrusted are untrusted accounts passing test.
func untrusted(f Facts, test func(*account) bool) []*account {
	var out []*account
	for _, a := range accounts(f) {
		if trusted(f, a.login) == "" && test(a) {
			out = append(out, a)
		}
	}
	return out
}

// how reads "write collaborator, team Developers".
func (a *account) how() string {
	via := slices.Clone(a.via)
	sort.Strings(via)
	return strings.Join(slices.Compact(via), ", ")
}

func logins(as []*account) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.login
	}
	return out
}

// accountChecks are the three checks on who may do what: push code (read
// the guard's secrets), write Actions (switch the guard off), administer.
func accountChecks(f Facts, g *guardWorkflow) []Check {
	if why, unread := f.Unread[FactAccounts]; unread {
		c := CouldNotCheck + why
		return []Check{
			{ID: CheckCodeWrite, Why: c, Logins: []string{}},
			{ID: CheckActionsWrite, Why: c, Logins: []string{}},
			{ID: CheckAdmin, Why: c, Logins: []string{}},
		}
	}
	secrets := exposed(g)
	return []Check{
		accountCheck(untrusted(f, func(a *account) bool { return a.units[Code] >= Write }), CheckCodeWrite,
			"no account but the trusted ones can push code", "can push code: a workflow on any branch reads "+secrets),
		accountCheck(untrusted(f, func(a *account) bool { return a.units[Actions] >= Write }), CheckActionsWrite,
			"no account but the trusted ones can write Actions",
			"can write Actions: can disable the guard's workflow, and re-run and delete its runs"),
		accountCheck(untrusted(f, func(a *account) bool { return a.admin }), CheckAdmin,
			"no account but the trusted ones administers the repository",
			"administers the repository: reads and writes its secrets and variables (the anchors) and changes the branch protection"),
	}
}

func accountCheck(bad []*account, id, ok, what string) Check {
	if len(bad) == 0 {
		return Check{ID: id, Holds: true, Why: ok, Logins: []string{}}
	}
	var whys []string
	for _, a := range bad {
		whys = append(whys, fmt.Sprintf("%s (%s) %s", a.login, a.how(), what))
	}
	return Check{ID: id, Why: strings.Join(whys, "; "), Logins: logins(bad)}
}

// exposed names the guard's secrets a branch workflow can read.
func exposed(g *guardWorkflow) string {
	if g == nil {
		return "every Actions secret of the repository and its owner"
	}
	what := map[string]string{"ledger-key": "the ledger key", "ledger-key-previous": "the previous ledger key",
		"admin-token": "the owner's token", "token": "the guard's token"}
	ins := g.secretInputs()
	names := make([]string, 0, len(ins))
	for in := range ins {
		names = append(names, in)
	}
	sort.Strings(names)
	var parts []string
	for _, in := range names {
		p := "`" + ins[in] + "`"
		if w := what[in]; w != "" {
			p += " (" + w + ")"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "every Actions secret of the repository and its owner"
	}
	return strings.Join(parts, " and ")
}
