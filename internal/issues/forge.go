package issues

import (
	"context"
	"errors"
	"time"
)

// ErrConflict is returned by Forge.EditBody when the body changed since it was read.
var ErrConflict = errors.New("issue body changed since it was read (HTTP 409)")

// ErrForbidden is wrapped by Forge methods when the token lacks the permission.
var ErrForbidden = errors.New("the token is not allowed to do this (HTTP 403)")

// ErrUnreachable is matched by Forge errors of a request that got no
// answer (a dropped connection, a timeout).
var ErrUnreachable = errors.New("the server did not answer")

// ErrNotFound is wrapped by Forge methods when the issue, comment or repository does not exist.
var ErrNotFound = errors.New("not found (HTTP 404)")

// ErrTooLarge is wrapped by Forge methods when what they read is larger
// than they read at most.
var ErrTooLarge = errors.New("larger than the guard reads")

// ErrUnauthorized is wrapped by Forge methods when the server rejected the
// token itself (HTTP 401): wrong, expired or revoked.
var ErrUnauthorized = errors.New("the server rejected the token (HTTP 401)")

// Forge is everything the guard needs from the server. The Gitea adapter in
// internal/forge implements it; every method makes a bounded number of requests.
type Forge interface {
	// Issue reads one issue or pull request live: one request.
	Issue(ctx context.Context, number int64) (Issue, error)
	// EditBody replaces the body if the issue's content version is still
	// version, and returns the new version. It returns an error wrapping
	// ErrConflict when the body changed in between.
	EditBody(ctx context.Context, number int64, body string, version int) (int, error)
	// RecentComments returns at least the last n comments of issue (all of
	// them if it has fewer), oldest first, reading only the tail of the
	// timeline: the number of requests does not grow with the comment count.
	RecentComments(ctx context.Context, issue Issue, n int) (CommentPage, error)
	// CommentsBefore returns the comments among the (at most 50) timeline
	// entries just before offset start, oldest first: one request.
	CommentsBefore(ctx context.Context, number int64, start int) (CommentPage, error)
	// Comment reads one comment of issue number by its id (one request),
	// its body kept up to MaxCommentBytes (Comment.TooLarge past it). A
	// comment that is gone, or is another issue's, is an error wrapping
	// ErrNotFound.
	Comment(ctx context.Context, number, id int64) (Comment, error)
	// CreateComment posts a comment.
	CreateComment(ctx context.Context, number int64, body string) (Comment, error)
	// EditComment replaces a comment's body.
	EditComment(ctx context.Context, id int64, body string) (Comment, error)
	// DeleteComment deletes a comment.
	DeleteComment(ctx context.Context, id int64) error
	// AddLabels attaches labels by name, creating the ones the repository
	// lacks first from specs (a name without a spec gets a neutral color).
	AddLabels(ctx context.Context, number int64, names []string, specs []LabelSpec) error
	// RemoveLabel detaches one label from the issue.
	RemoveLabel(ctx context.Context, number int64, label Label) error
	// Lock locks the issue's conversation. It needs repository admin: the
	// Actions token gets an error wrapping ErrForbidden.
	Lock(ctx context.Context, number int64, reason string) error
	// Self returns the login of the token's own user.
	Self(ctx context.Context) (string, error)
	// PullFiles lists the paths a pull request changes.
	PullFiles(ctx context.Context, number int64) ([]string, error)
	// File reads a file of the repository's default branch, at most max
	// bytes (more is an error): one request. A missing file is an error
	// wrapping ErrNotFound.
	File(ctx context.Context, path string, max int64) ([]byte, error)
	// PullFile reads a file as pull request number's head commit holds
	// it, at most max bytes; a missing file is an error wrapping
	// ErrNotFound.
	PullFile(ctx context.Context, number int64, path string, max int64) ([]byte, error)
	// IsRepoAdmin reports whether user has admin permission on the
	// repository: one request, which needs a repository-admin token (the
	// Actions token gets an error wrapping ErrForbidden).
	IsRepoAdmin(ctx context.Context, user string) (bool, error)
	// BodyHistory reads the edit history of issue number's body, oldest
	// first: the revisions the server keeps (Gitea: the first and up to
	// 19 more), each with its editor and text. An error wrapping
	// ErrForbidden or ErrNotFound says the history cannot be read (Gitea
	// shows it only where the repository is public). One request, and one
	// a revision.
	BodyHistory(ctx context.Context, number int64) ([]Revision, error)
	// TitleChanges reads the changes of issue number's title since a time,
	// oldest first, from its timeline: one request a page of 50 entries.
	TitleChanges(ctx context.Context, number int64, since time.Time) ([]TitleChange, error)
	// Writers lists the logins that can write the repository's issues:
	// its owner and the collaborators and team members with write access
	// (Gitea's assignees of the repository), one request.
	Writers(ctx context.Context) ([]string, error)
	// ServerTime is the server's clock as of its last answer (its Date
	// header), or the zero time before any answer.
	ServerTime() time.Time
}
