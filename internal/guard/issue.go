package guard

import (
	"context"
	"errors"
	"time"
)

// ActionsUser is the login Gitea gives the automatic Actions token. Writes made
// with it never trigger new workflow runs, and the guard knows its own login
// without asking the server.
const ActionsUser = "gitea-actions"

// Label is a label as attached to an issue.
type Label struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// Issue is the live state of an issue or pull request, as the guard reads it.
type Issue struct {
	Number         int64
	Title          string
	Body           string
	Labels         []Label
	Locked         bool
	IsPull         bool
	State          string // "open" or "closed"
	Comments       int    // number of comments (not timeline events)
	ContentVersion int    // for compare-and-swap body edits
	UpdatedAt      time.Time
	// NoCAS says the server sent no content_version (Forgejo, say): body
	// writes are last-write-wins there.
	NoCAS bool
	// RepoID and RepoOwner are the repository's id and its owner's login,
	// as the server says (a record signed for another repository's issue
	// names another id).
	RepoID    int64
	RepoOwner string
	// BodyTooLarge says the body is over MaxBodyBytes (or the answer that
	// holds it was cut off): it was not read, Body is empty, and BodyBytes
	// is its length in bytes, at least.
	BodyTooLarge bool
	BodyBytes    int64
}

// LabelNames returns the names of the issue's labels, in the order given.
func (i Issue) LabelNames() []string {
	names := make([]string, len(i.Labels))
	for k, l := range i.Labels {
		names[k] = l.Name
	}
	return names
}

// Comment is one issue comment.
type Comment struct {
	ID        int64
	Author    string
	Body      string
	HTMLURL   string
	CreatedAt time.Time
	UpdatedAt time.Time
	// TooLarge says the body is over MaxCommentBytes (or the answer that
	// holds it was cut off): it was not read, Body is empty, and BodyBytes
	// is its length in bytes, at least.
	TooLarge  bool
	BodyBytes int64
	// Unread, when not 0, makes this no comment but a stretch of that many
	// timeline entries the read gave up on (its budget of requests ran out
	// on entries too large to read): what they hold is unknown. ID is 0
	// and TooLarge true.
	Unread int
}

// LabelEvent is a label added to or removed from the issue, as its
// timeline records it (an agent cannot erase these entries).
type LabelEvent struct {
	Label string
	// LabelID is the label's id: a label renamed since shows its new name
	// on old entries, its id stays.
	LabelID int64
	Added   bool
	Actor   string
	At      time.Time
}

// CommentPage is a run of an issue's comments read from its timeline, oldest
// first, with the label events among them. Start is the timeline offset at
// which the read began; 0 means the run reaches back to the first comment of
// the issue. Truncated says the read stopped at its page budget before it
// found as many comments as were asked for: Comments holds the newest it
// found (possibly none), and older ones lie before Start.
type CommentPage struct {
	Comments  []Comment
	Labels    []LabelEvent
	Start     int
	Truncated bool
	// Unread is the number of timeline entries the read gave up on (see
	// Comment.Unread, which stands for them among Comments).
	Unread int
}

// LabelSpec describes a label the guard may have to create.
type LabelSpec struct {
	Name        string
	Color       string // six hex digits, no '#'
	Description string
}

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
	// IsRepoAdmin reports whether user has admin permission on the
	// repository: one request, which needs a repository-admin token (the
	// Actions token gets an error wrapping ErrForbidden).
	IsRepoAdmin(ctx context.Context, user string) (bool, error)
	// ServerTime is the server's clock as of its last answer (its Date
	// header), or the zero time before any answer.
	ServerTime() time.Time
}
