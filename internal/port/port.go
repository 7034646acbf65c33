package port

import (
	"context"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/posture"
	"github.com/gns-guard/gns-guard/internal/secrets"
)

// Forge is every capability of one repository's client.
type Forge interface {
	Connection
	IssueReader
	IssueWriter
	Permissions
	Variables
	RepoLabels
	IssueLister
	WorkflowReader
	PostureReader
	PostureAdmin
	Setup
	PostureSetup
}

// Connection is what a client says of itself.
type Connection interface {
	// Requests counts the requests the client has sent.
	Requests() int64
	// HoldSecrets refuses requests carrying ss
	// (docs/ledger.md#no-secret-in-a-write).
	HoldSecrets(ss ...secrets.Secret)
}

// IssueReader makes a bounded number of requests a method.
type IssueReader interface {
	// Issue reads one issue or pull request: one request.
	Issue(ctx context.Context, number int64) (issues.Issue, error)
	// RecentComments returns at least the last n comments of issue (all of
	// them if it has fewer), oldest first, reading only the tail of the
	// timeline: the number of requests does not grow with the comment count.
	RecentComments(ctx context.Context, issue issues.Issue, n int) (issues.CommentPage, error)
	// CommentsBefore reads ≤ 50 entries before start, oldest first: one
	// request.
	CommentsBefore(ctx context.Context, number int64, start int) (issues.CommentPage, error)
	// CommentsSince returns the comments updated at or after since, oldest
	// first, in one request; an answer too large for one is an error.
	CommentsSince(ctx context.Context, number int64, since time.Time) ([]issues.Comment, error)
	// FirstEditAfter is the time of the body's first edit after t, from
	// its edit history; false when the history cannot be read or holds
	// none after t. One request.
	FirstEditAfter(ctx context.Context, number int64, t time.Time) (time.Time, bool)
	// Comment reads one comment of issue number by its id (one request),
	// its body kept up to issues.MaxCommentBytes (Comment.TooLarge past
	// it). A comment that is gone, or is another issue's, is an error
	// wrapping issues.ErrNotFound.
	Comment(ctx context.Context, number, id int64) (issues.Comment, error)
	// BodyHistory reads the edit history of issue number's body, oldest
	// first: the revisions the server keeps (Gitea: the first and up to
	// 19 more), each with its editor and text. An error wrapping
	// issues.ErrForbidden or issues.ErrNotFound says the history cannot be
	// read (Gitea shows it only where the repository is public). One
	// request, and one a revision.
	BodyHistory(ctx context.Context, number int64) ([]issues.Revision, error)
	// TitleChanges reads the changes of issue number's title since a time,
	// oldest first, from its timeline: one request a page of 50 entries.
	TitleChanges(ctx context.Context, number int64, since time.Time) ([]issues.TitleChange, error)
	// Writers lists the logins that can write the repository's issues
	// (Gitea's assignees of the repository): the collaborators with write,
	// the members of a team with a unit at write (or Pull requests at
	// read), and a user who owns it; package access decides with it. Any
	// reader may ask; one request.
	Writers(ctx context.Context) ([]string, error)
	// PullFiles lists the paths a pull request changes.
	PullFiles(ctx context.Context, number int64) ([]string, error)
	// File reads a file of the default branch, at most max bytes (more is
	// an error): one request. A missing file is an error wrapping
	// issues.ErrNotFound.
	File(ctx context.Context, path string, max int64) ([]byte, error)
	// PullFile reads a file as pull request number's head commit holds
	// it, at most max bytes; a missing file is an error wrapping
	// issues.ErrNotFound.
	PullFile(ctx context.Context, number int64, path string, max int64) ([]byte, error)
	// Self returns the login of the token's own user.
	Self(ctx context.Context) (string, error)
	// ServerTime is the server's clock at its last answer; zero before.
	ServerTime() time.Time
}

// IssueWriter writes one repository's issues.
type IssueWriter interface {
	// EditBody replaces the body if the issue's content version is still
	// version, and returns the new version. It returns an error wrapping
	// issues.ErrConflict when the body changed in between.
	EditBody(ctx context.Context, number int64, body string, version int) (int, error)
	// CreateComment posts a comment.
	CreateComment(ctx context.Context, number int64, body string) (issues.Comment, error)
	// EditComment replaces a comment's body.
	EditComment(ctx context.Context, id int64, body string) (issues.Comment, error)
	// DeleteComment deletes a comment.
	DeleteComment(ctx context.Context, id int64) error
	// AddLabels attaches labels by name, creating the ones the repository
	// lacks first from specs (a name without a spec gets a neutral color).
	AddLabels(ctx context.Context, number int64, names []string, specs []issues.LabelSpec) error
	// AttachLabels is AddLabels, answering the issue's labels after.
	AttachLabels(ctx context.Context, number int64, names []string, specs []issues.LabelSpec) ([]issues.Label, error)
	// RemoveLabel detaches one label from the issue.
	RemoveLabel(ctx context.Context, number int64, label issues.Label) error
	// Lock needs repository admin; the Actions token gets
	// issues.ErrForbidden.
	Lock(ctx context.Context, number int64, reason string) error
	// SetAssignees replaces the issue's assignees (none: clears them).
	SetAssignees(ctx context.Context, number int64, logins []string) error
}

// Permissions reads what an account may do in the repository. The server
// answers a repository admin, and a user about themselves; others get an
// error wrapping issues.ErrForbidden.
type Permissions interface {
	// IsRepoAdmin reports whether user has admin (or owner) permission.
	IsRepoAdmin(ctx context.Context, user string) (bool, error)
	// Permission is user's permission: none, read, write, admin or owner.
	Permission(ctx context.Context, user string) (string, error)
}

// Variables reads and writes the repository's Actions variables: the
// issues' anchors, the grant list, the label pins. Only the repository's
// owner (or a site admin) may; others get an error wrapping
// issues.ErrForbidden.
type Variables interface {
	// Variable is false when there is none.
	Variable(ctx context.Context, name string) (string, bool, error)
	// SetVariable writes variable name, creating it when exists is false.
	SetVariable(ctx context.Context, name, value string, exists bool) error
}

// RepoLabels reads and creates the repository's labels.
type RepoLabels interface {
	// Labels lists the repository's labels.
	Labels(ctx context.Context) ([]RepoLabel, error)
	// CreateLabel creates a label from spec.
	CreateLabel(ctx context.Context, spec issues.LabelSpec) (RepoLabel, error)
	// CreateLabels creates the missing specs and returns every label after.
	CreateLabels(ctx context.Context, specs []issues.LabelSpec) ([]issues.Label, error)
}

// IssueLister is for the dashboard: last-write-wins on the guard's own
// issue.
type IssueLister interface {
	// ListIssues reads one page of the repository's issues.
	ListIssues(ctx context.Context, q IssueQuery) (IssuePage, error)
	// CreateIssue opens an issue.
	CreateIssue(ctx context.Context, title, body string) (issues.Issue, error)
	// EditIssue changes an issue's title, body or state.
	EditIssue(ctx context.Context, number int64, e IssueEdit) (issues.Issue, error)
}

// WorkflowReader reads the default branch's workflows.
type WorkflowReader interface {
	// Workflows lists the workflows of the default branch: one request.
	Workflows(ctx context.Context) ([]Workflow, error)
	// File reads a file of the default branch (IssueReader.File).
	File(ctx context.Context, path string, max int64) ([]byte, error)
}

// PostureReader serves doctor and the action's posture check.
type PostureReader interface {
	// Repository reads the repository: one request.
	Repository(ctx context.Context) (Repository, error)
	// PostureFacts reads the posture of the repository, whose default
	// branch is branch. admin (nil: the client itself) reads what only the
	// owner may; when it may not, the fact is left unread with hint (how
	// to give an owner's token).
	PostureFacts(ctx context.Context, admin PostureAdmin, branch, hint string) (posture.Facts, error)
}

// PostureAdmin reads what only the owner may see.
type PostureAdmin interface {
	// TeamMembers lists team id's members.
	TeamMembers(ctx context.Context, id int64) ([]Member, error)
	// Permission is user's permission on the repository (Permissions).
	Permission(ctx context.Context, user string) (string, error)
	// Branch reads a branch's protection as the branch shows it.
	Branch(ctx context.Context, name string) (Branch, error)
	// BranchRuleNamed is false when there is none.
	BranchRuleNamed(ctx context.Context, name string) (BranchRule, bool, error)
	// SecretNames are the names of the repository's Actions secrets.
	SecretNames(ctx context.Context) ([]string, error)
}

// Setup is what `gns-guard init` needs: the repository, its labels,
// files on a branch, a commit of several files, a pull request, and the
// secrets' names.
type Setup interface {
	Repository(ctx context.Context) (Repository, error)
	Labels(ctx context.Context) ([]RepoLabel, error)
	CreateLabel(ctx context.Context, spec issues.LabelSpec) (RepoLabel, error)
	// FileAt reads ref ("": the default branch).
	FileAt(ctx context.Context, ref, path string, max int64) (RepoFile, error)
	// BranchExists reports whether the branch exists.
	BranchExists(ctx context.Context, name string) (bool, error)
	// CommitFiles makes one commit and returns its id.
	CommitFiles(ctx context.Context, c Commit) (string, error)
	// OpenPull finds the open pull request from head into base.
	OpenPull(ctx context.Context, head, base string) (Pull, bool, error)
	// CreatePull opens a pull request from head into base.
	CreatePull(ctx context.Context, head, base, title, body string) (Pull, error)
	SecretNames(ctx context.Context) ([]string, error)
}

// PostureSetup is what `gns-guard init` needs to build the recommended
// posture: the agents' team of an organisation, and the default branch's
// protection with the guard's check required.
type PostureSetup interface {
	// OwnerIsOrg says the repository's owner is an organisation.
	OwnerIsOrg(ctx context.Context) (bool, error)
	// OrgTeams lists the teams of the repository's organisation.
	OrgTeams(ctx context.Context) ([]Team, error)
	// CreateTeam creates a team with a mode on each unit.
	CreateTeam(ctx context.Context, name, description string, units map[string]string) (Team, error)
	// TeamHasRepo says the team has access to the repository.
	TeamHasRepo(ctx context.Context, id int64) (bool, error)
	// AddTeamRepo gives the team access to the repository.
	AddTeamRepo(ctx context.Context, id int64) error
	TeamMembers(ctx context.Context, id int64) ([]Member, error)
	// AddTeamMember adds login to the team.
	AddTeamMember(ctx context.Context, id int64, login string) error
	BranchRuleNamed(ctx context.Context, name string) (BranchRule, bool, error)
	// ProtectBranch sets r's Name, Push, StatusCheck and Contexts.
	ProtectBranch(ctx context.Context, r BranchRule) error
	// RequireChecks makes the rule name wait for contexts before merging.
	RequireChecks(ctx context.Context, name string, contexts []string) error
}
