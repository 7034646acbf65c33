package posture

import "strings"

// Mode is Gitea's unit access: none, read, write, admin, owner.
type Mode int

// The access modes, weakest first.
const (
	None Mode = iota
	Read
	Write
	Admin
	Owner
)

// ParseMode reads an unknown name as None.
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

// Units as keyed in a team's units_map (Gitea's routers/api/v1/org/team.go).
const (
	Code    = "repo.code"
	Issues  = "repo.issues"
	Pulls   = "repo.pulls"
	Actions = "repo.actions"
)

// OwnersTeam members own every repository of the organisation.
const OwnersTeam = "Owners"

// Team is an organisation team with access to the repository.
type Team struct {
	Name string
	// Permission admin or owner makes members owners, whatever the units.
	Permission Mode
	// Units is the team's mode on each unit (units_map).
	Units map[string]Mode
	// Members are the team's logins.
	Members []string
}

// Collaborator is added by name, with one mode on every unit.
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
	// PushKnown needs a repository admin's token.
	PushKnown bool
	// Push allows pushing at all; PushWhitelist limits it to PushUsers and
	// PushTeams.
	Push, PushWhitelist bool
	PushUsers           []string
	PushTeams           []string
}

// Facts are what the judge needs, as read.
type Facts struct {
	// Repo is OWNER/NAME; Owner is an organisation when OwnerIsOrg.
	Repo, Owner string
	OwnerIsOrg  bool
	// DefaultBranch holds the guard's workflow and settings.
	DefaultBranch string
	// SiteAdmins are the accounts known to be the server's administrators.
	SiteAdmins []string
	// BudgetAdmins are the approvers of the guard's settings.
	BudgetAdmins []string
	// Teams and Collaborators are every account with access, owner aside.
	Teams         []Team
	Collaborators []Collaborator
	// Listed collaborators are known by name only (FactAccounts says why).
	Listed []string
	// Workflows are the default branch's workflow files.
	Workflows []Workflow
	// Branch is the default branch's protection.
	Branch Protection
	// Secrets are the names of the repository's Actions secrets.
	Secrets []string
	// PublicKey is the ledger-public-key the settings file publishes.
	PublicKey string
	// Unread maps FactAccounts, FactWorkflows, FactPush, FactSecrets,
	// FactConfig to why.
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
