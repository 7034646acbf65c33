package port

import "github.com/gns-guard/gns-guard/internal/issues"

// IssueQuery selects a page of a repository's issues (pull requests are
// never listed).
type IssueQuery struct {
	// State is "open" (the default), "closed" or "all".
	State string
	// CreatedBy, when set, lists only the issues this login opened. Gitea
	// answers 404 for a login that is not a user's (the Actions user).
	CreatedBy string
	// Page is the page to read, from 1, of 50 issues each, newest first
	// (Gitea sorts the list by creation, newest first).
	Page int
}

// IssuePage is one page of a repository's issues.
type IssuePage struct {
	// Issues are the page's issues, newest first, each as Issue reads it:
	// a body over issues.MaxBodyBytes is not kept (Issue.BodyTooLarge).
	Issues []issues.Issue
	// Authors are the logins that opened them, by number ("" when the
	// answer was cut before it said).
	Authors map[int64]string
	// Total is the number of issues the query selects, as the server
	// counts them (X-Total-Count), or -1 when it did not say.
	Total int
	// Last says this is the last page.
	Last bool
}

// IssueEdit is a change to an issue's title, body or state; nil leaves a
// field as it is.
type IssueEdit struct {
	Title *string `json:"title,omitempty"`
	Body  *string `json:"body,omitempty"`
	// State is "open" or "closed".
	State *string `json:"state,omitempty"`
}

// Workflow is a workflow file of the repository's default branch as
// GET /repos/{owner}/{repo}/actions/workflows lists it (Gitea 1.26,
// routers/api/v1/repo/action.go; it needs Actions read).
type Workflow struct {
	// ID is the file's name, Path its path (.gitea/workflows/x.yml).
	ID   string `json:"id"`
	Name string `json:"name"`
	Path string `json:"path"`
	// State is "active", or "disabled_manually" for a workflow a user
	// with Actions write disabled: it starts no run for issue and comment
	// events.
	State string `json:"state"`
}

// Repository is what the guard needs to know of a repository.
type Repository struct {
	// ID is the server's number for the repository: it stays through a
	// rename and a transfer, whatever letter case names it.
	ID int64
	// FullName is OWNER/NAME, as the server spells it; HTMLURL the
	// repository's page.
	FullName, HTMLURL string
	// DefaultBranch is the branch the guard reads its configuration from
	// and pull requests go into.
	DefaultBranch string
	// Empty is a repository with no commit yet; Archived one that takes no
	// writes.
	Empty, Archived bool
	// CanPush says the token may push to it (write access).
	CanPush bool
}

// RepoLabel is a label of the repository.
type RepoLabel struct {
	ID          int64
	Name        string
	Color       string // six hex digits, no '#'
	Description string
}

// RepoFile is a file of a branch, as the contents API gives it.
type RepoFile struct {
	Path    string
	Content []byte
	// SHA is the blob's id, which updating the file names.
	SHA string
}

// FileChange is one file a Commit writes: created when SHA is empty,
// otherwise updated from the blob SHA names (the server refuses the update
// when the file changed since).
type FileChange struct {
	Path    string
	Content []byte
	SHA     string
}

// Commit is one commit of several files.
type Commit struct {
	// Branch is the branch the commit goes onto ("": the default branch).
	Branch string
	// NewBranch, when set, is a branch created from Branch for the
	// commit; Branch is left as it is.
	NewBranch string
	Message   string
	Files     []FileChange
}

// Pull is a pull request.
type Pull struct {
	Number     int64
	Title      string
	HTMLURL    string
	Head, Base string // branch names
}

// Team is an organisation's team.
type Team struct {
	ID    int64
	Name  string
	Units map[string]string // unit key → mode (units_map)
}

// Member is an account a list of users names.
type Member struct {
	Login string
	// SiteAdmin says the server shows the account as a site admin (it
	// shows it only to site admins).
	SiteAdmin bool
}

// Branch is a branch's protection as the branch shows it.
type Branch struct {
	Protected   bool
	StatusCheck bool
	Contexts    []string
	// Rule names the protection rule that applies ("" when the server
	// does not say).
	Rule string
}

// BranchRule is a branch protection rule, as far as the guard reads and
// sets it.
type BranchRule struct {
	Name        string
	Push        bool // pushing is allowed (to everyone with Code write, or a list)
	StatusCheck bool
	Contexts    []string
	// PushWhitelist says pushing is allowed to PushUsers and PushTeams
	// only.
	PushWhitelist bool
	PushUsers     []string
	PushTeams     []string
}
