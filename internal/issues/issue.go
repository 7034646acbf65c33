package issues

import "time"

// ActionsUser is the login Gitea gives the automatic Actions token. Writes made
// with it never trigger new workflow runs, and the guard knows its own login
// without asking the server.
const ActionsUser = "gitea-actions"

// Label is a label as attached to an issue.
type Label struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// Issue is an issue or pull request as read live.
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
	// CreatedAt is zero when the server did not say.
	CreatedAt time.Time
	// NoCAS: no content_version (Forgejo, say), so body writes are
	// last-write-wins.
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

// LabelNames keeps the labels' order.
func (i Issue) LabelNames() []string { return NamesOf(i.Labels) }

// NamesOf returns the names of labels, in the order given.
func NamesOf(labels []Label) []string {
	names := make([]string, len(labels))
	for k, l := range labels {
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

// LabelEvent is a timeline label change; an agent cannot erase it.
type LabelEvent struct {
	Label string
	// LabelID survives a rename; old entries show the new name.
	LabelID int64
	Added   bool
	Actor   string
	At      time.Time
}

// CommentPage is a run of an issue's comments from its timeline, oldest
// first, with the label events among them. Start is the offset the read
// began at (0: the first comment). Truncated says the page budget ran out:
// Comments holds the newest found, and older ones lie before Start.
type CommentPage struct {
	Comments  []Comment
	Labels    []LabelEvent
	Start     int
	Truncated bool
	// Unread counts entries given up (see Comment.Unread).
	Unread int
}

// LabelSpec describes a label the guard may have to create.
type LabelSpec struct {
	Name        string
	Color       string // six hex digits, no '#'
	Description string
}

// Revision is one revision of an issue body, as the server's edit history
// keeps it: who made it and when, and its text.
type Revision struct {
	Editor string
	At     time.Time
	// Text is the body as the revision left it; Deleted says someone
	// deleted the revision from the history (its text is gone: Text is
	// "").
	Text    string
	Deleted bool
}

// TitleChange is a timeline title change; an agent cannot erase it.
type TitleChange struct {
	Old, New string
	Actor    string
	At       time.Time
}
