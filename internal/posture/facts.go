package posture

import "strings"

// Mode is the access an account has to a unit of a repository, as Gitea
// names it (none, read, write, admin, owner).
type Mode int

// The access modes, weakest first.
const (
	None Mode = iota
	Read
	Write
	Admin
	Owner
)

// ParseMode reads Gitea's name of a mode; an unknown name is None.
func ParseMode(s string) Mode {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "read":
		return Read
	case "write":
		return Write
	case "admin":
		return Admin
	case "owner":
		return Owner
	}
	return None
}

// String is Gitea's name of the mode.
func (m Mode) String() string {
	return [...]string{"none", "read", "write", "admin", "owner"}[max(None, min(m, Owner))]
}

// The units of a repository the threat model speaks of, by the keys of a
// team's units_map (Gitea's routers/api/v1/org/team.go).
const (
	Code    = "repo.code"
	Issues  = "repo.issues"
	Pulls   = "repo.pulls"
	Actions = "repo.actions"
)

// OwnersTeam is the name of an organisation's owners team: its members own
// every repository of the organisation.
const OwnersTeam = "Owners"

// Team is an organisation team with access to the repository.
type Team struct {
	Name string
	// Permission is the team's overall mode; admin or owner makes its
	// members owners of the repository, whatever its units say.
	Permission Mode
	// Units is the team's mode on each unit (units_map).
	Units map[string]Mode
	// Members are the team's logins.
	Members []string
}

// Collaborator is an account added to the repository by name. Gitea
// gives a collaborator its one mode on every unit.
type Collaborator struct {
	Login      string
	Permission Mode
}

// Workflow is a workflow file of the default branch.
type Workflow struct {
	// Path is the file's path (.gitea/workflows/gns-guard.yml).
	Path string
	// Disabled says the workflow is disabled (state disabled_manually).
	Disabled bool
	// Content is the file as committed.
	Content []byte
}

// Protection is the default branch's protection.
type Protection struct {
	// Protected says a rule covers the branch.
	Protected bool
	// StatusCheck says merging waits for the Contexts (patterns).
	StatusCheck bool
	Contexts    []string
	// PushKnown says the rule's push settings were read (they need a
	// repository admin's token).
	PushKnown bool
	// Push says pushing to the branch is allowed at all; PushWhitelist
	// limits it to PushUsers and the members of PushTeams.
	Push, PushWhitelist bool
	PushUsers           []string
	PushTeams           []string
}

// Facts are what the judge needs to know of a repository, as read.
type Facts struct {
	// Repo is OWNER/NAME; Owner its owner's login, an organisation when
	// OwnerIsOrg.
	Repo, Owner string
	OwnerIsOrg  bool
	// DefaultBranch is the branch the guard's workflow and settings are
	// read from.
	DefaultBranch string
	// SiteAdmins are the accounts known to be the server's administrators.
	SiteAdmins []string
	// BudgetAdmins are the approvers of the guard's settings.
	BudgetAdmins []string
	// Teams and Collaborators are every account with access, apart from
	// the owner.
	Teams         []Team
	Collaborators []Collaborator
	// Listed are the collaborators the list named whose permission the
	// tokens may not read (FactAccounts says so): known by name only.
	Listed []string
	// Workflows are the default branch's workflow files.
	Workflows []Workflow
	// Branch is the default branch's protection.
	Branch Protection
	// Secrets are the names of the repository's Actions secrets.
	Secrets []string
	// PublicKey is the ledger-public-key the settings file publishes.
	PublicKey string
	// Unread names the facts that could not be read, and why: keys
	// FactAccounts, FactWorkflows, FactPush, FactSecrets, FactConfig.
	Unread map[string]string
}

// The facts Facts.Unread may name.
const (
	FactAccounts  = "accounts"
	FactWorkflows = "workflows"
	FactPush      = "push"
	FactSecrets   = "secrets"
	FactConfig    = "config"
)
