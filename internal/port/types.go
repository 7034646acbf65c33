package port

import "github.com/gns-guard/gns-guard/internal/issues"

// IssueQuery never lists pull requests.
type IssueQuery struct {
	// State is "open" (the default), "closed" or "all".
	State string
	// CreatedBy, when set, lists only the issues this login opened. Gitea
	// answers 404 for a login that is not a user's (the Actions user).
	CreatedBy string
	// Page is 1-based, 50 issues each, newest first as Gitea sorts.
	Page int
}

// IssuePage is one page of a repository's issues.
type IssuePage struct {
	// Issues are newest first; a body over issues.MaxBodyBytes is dropped
	// (Issue.BodyTooLarge).
	Issues []issues.Issue
	// Authors maps number to opener; "" when the answer was cut.
	Authors map[int64]string
	// Total is X-Total-Count, or -1 when absent.
	Total int
	// Last says this is the last page.
	Last bool
}

// IssueEdit leaves nil fields as they are.
type IssueEdit struct {
	Title *string `json:"title,omitempty"`
	Body  *string `json:"body,omitempty"`
	// State is "open" or "closed".
	State *string `json:"state,omitempty"`
}

// Workflow is one of the default branch's, as GET
// /repos/{owner}/{repo}/actions/workflows lists it (Gitea 1.26,
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

// Repository is what the guard needs of a repository.
type Repository struct {
	// ID survives renames, transfers and letter case.
	ID int64
	// FullName is OWNER/NAME as the server spells it; HTMLURL its page.
	FullName, HTMLURL string
	// DefaultBranch holds the configuration and takes pull requests.
	DefaultBranch string
	// Empty has no commit yet; Archived takes no writes.
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

// RepoFile is as the contents API gives it.
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
	// Branch receives the commit ("": the default branch).
	Branch string
	// NewBranch, when set, is made from Branch, which stays as it is.
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
	// SiteAdmin is shown only to site admins.
	SiteAdmin bool
}

// Branch is a branch's protection as the branch shows it.
type Branch struct {
	Protected   bool
	StatusCheck bool
	Contexts    []string
	// Rule is "" when the server does not say.
	Rule string
}

// BranchRule is what the guard reads and sets of a rule.
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
