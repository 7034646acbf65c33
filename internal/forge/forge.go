package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/gns-guard/gns-guard/internal/guard"
)

// PageSize is the page length used for every paged list: Gitea's default
// [api] MAX_RESPONSE_ITEMS, the largest page it serves out of the box.
const PageSize = 50

// maxPages stops a paged read that never ends (a server ignoring paging).
const maxPages = 2000

// DefaultLabelColor is the color of a label created without a spec.
const DefaultLabelColor = "ededed"

// apiIssue is the part of Gitea's issue JSON the guard reads. The SDK's
// Issue lacks content_version, hence a local type.
type apiIssue struct {
	Number int64  `json:"number"`
	Title  string `json:"title"`
	Body   string `json:"body"`
	Labels []struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	} `json:"labels"`
	State          string      `json:"state"`
	IsLocked       bool        `json:"is_locked"`
	Comments       int         `json:"comments"`
	ContentVersion *int        `json:"content_version"`
	Updated        time.Time   `json:"updated_at"`
	PullRequest    presentJSON `json:"pull_request"`
}

// presentJSON records whether a JSON value was present and not null.
type presentJSON bool

func (p *presentJSON) UnmarshalJSON(b []byte) error {
	*p = presentJSON(string(b) != "null")
	return nil
}

func (a apiIssue) toGuard() guard.Issue {
	is := guard.Issue{
		Number:    a.Number,
		Title:     a.Title,
		Body:      a.Body,
		Labels:    make([]guard.Label, 0, len(a.Labels)),
		Locked:    a.IsLocked,
		IsPull:    bool(a.PullRequest),
		State:     a.State,
		Comments:  a.Comments,
		NoCAS:     a.ContentVersion == nil,
		UpdatedAt: a.Updated,
	}
	if a.ContentVersion != nil {
		is.ContentVersion = *a.ContentVersion
	}
	for _, l := range a.Labels {
		is.Labels = append(is.Labels, guard.Label{ID: l.ID, Name: l.Name})
	}
	return is
}

func (c *Client) issuePath(number int64) string {
	return c.repoPath() + "/issues/" + strconv.FormatInt(number, 10)
}

// Issue reads one issue or pull request: one GET, decoded locally so that
// content_version (absent from the SDK's Issue) is kept.
func (c *Client) Issue(ctx context.Context, number int64) (guard.Issue, error) {
	var a apiIssue
	if err := c.do(ctx, http.MethodGet, c.issuePath(number), nil, &a); err != nil {
		return guard.Issue{}, err
	}
	return a.toGuard(), nil
}

// EditBody replaces the body with one PATCH carrying content_version, which
// Gitea (1.26) checks: a stale version is answered 409, returned as an error
// wrapping guard.ErrConflict. It returns the issue's new content version.
func (c *Client) EditBody(ctx context.Context, number int64, body string, version int) (int, error) {
	in := struct {
		Body           string `json:"body"`
		ContentVersion int    `json:"content_version"`
	}{body, version}
	var a apiIssue
	if err := c.do(ctx, http.MethodPatch, c.issuePath(number), in, &a); err != nil {
		return 0, err
	}
	if a.ContentVersion == nil {
		return 0, nil
	}
	return *a.ContentVersion, nil
}

// timelineEntry is one element of GET .../issues/{n}/timeline.
type timelineEntry struct {
	ID      int64  `json:"id"`
	Type    string `json:"type"`
	HTMLURL string `json:"html_url"`
	User    *struct {
		Login string `json:"login"`
	} `json:"user"`
	OriginalAuthor string `json:"original_author"`
	Body           string `json:"body"`
	Label          *struct {
		Name string `json:"name"`
	} `json:"label"`
	Created time.Time `json:"created_at"`
	Updated time.Time `json:"updated_at"`
}

// Timeline entry types (Gitea's CommentType strings). Only "comment" is a
// plain comment; "review" is counted in the issue's comment count too.
const (
	typeComment = "comment"
	typeReview  = "review"
	typeLabel   = "label"
)

// labelEvent reads a label entry: Gitea stores "1" as the content of an
// addition and nothing for a removal.
func (e *timelineEntry) labelEvent() (guard.LabelEvent, bool) {
	if e.Type != typeLabel || e.Label == nil || e.Label.Name == "" {
		return guard.LabelEvent{}, false
	}
	le := guard.LabelEvent{Label: e.Label.Name, Added: e.Body == "1", At: e.Created}
	if e.User != nil {
		le.Actor = e.User.Login
	}
	return le, true
}

func (e *timelineEntry) comment() guard.Comment {
	author := e.OriginalAuthor
	if e.User != nil && e.User.Login != "" {
		author = e.User.Login
	}
	return guard.Comment{
		ID:        e.ID,
		Author:    author,
		Body:      e.Body,
		HTMLURL:   e.HTMLURL,
		CreatedAt: e.Created,
		UpdatedAt: e.Updated,
	}
}

// timelinePage reads timeline entries [(page-1)*PageSize, page*PageSize),
// oldest first. Gitea pages the underlying rows and then drops some (code
// review comments, cross-references the token cannot see), so a page can
// be shorter than PageSize without being the last. Its X-Total-Count is the
// length of the page, not a total, and is not used.
func (c *Client) timelinePage(ctx context.Context, number int64, page int) ([]*timelineEntry, error) {
	q := url.Values{"page": {strconv.Itoa(page)}, "limit": {strconv.Itoa(PageSize)}}
	var entries []*timelineEntry // Gitea answers null for an empty page
	if err := c.do(ctx, http.MethodGet, c.issuePath(number)+"/timeline?"+q.Encode(), nil, &entries); err != nil {
		return nil, err
	}
	return entries, nil
}

// RecentComments returns at least the last n comments of the issue, oldest
// first, reading the timeline from a page-aligned offset near its end.
//
// The issue's comment count N (plain comments and reviews) bounds where they
// are: the k-th counted entry sits at timeline offset ≥ k, so every one of
// the last n lies at or after S = floor((N-n)/50)*50. The read goes forward
// from S to the end of the timeline, so the number of requests grows with
// the events (labels, locks, ...) after S, never with the comment count:
// for an issue whose tail is comments it is one or two requests. A page
// shorter than 50 ends the read for an issue; for a pull request, whose
// code review comments Gitea filters out of full pages, only an empty page
// does. If fewer than n comments turned up (reviews among the counted, or
// comments deleted since the issue was read), earlier pages are added one
// by one.
func (c *Client) RecentComments(ctx context.Context, issue guard.Issue, n int) (guard.CommentPage, error) {
	n = max(n, 0)
	start := (max(issue.Comments-n, 0) / PageSize) * PageSize
	// At least want counted entries lie at offsets ≥ start; seeing fewer
	// means the read stopped early on a filtered page.
	want := issue.Comments - start

	var comments []guard.Comment
	var labels []guard.LabelEvent
	seen := make(map[int64]bool)
	counted := 0
	for page, reads := start/PageSize+1, 0; ; page, reads = page+1, reads+1 {
		if reads >= maxPages {
			return guard.CommentPage{}, fmt.Errorf("forge: timeline of #%d: no end after %d pages", issue.Number, maxPages)
		}
		entries, err := c.timelinePage(ctx, issue.Number, page)
		if err != nil {
			return guard.CommentPage{}, err
		}
		for _, e := range entries {
			if e == nil {
				continue
			}
			switch e.Type {
			case typeComment:
				counted++
				if !seen[e.ID] {
					seen[e.ID] = true
					comments = append(comments, e.comment())
				}
			case typeReview:
				counted++
			case typeLabel:
				if le, ok := e.labelEvent(); ok && !seen[e.ID] {
					seen[e.ID] = true
					labels = append(labels, le)
				}
			}
		}
		if len(entries) == 0 {
			break
		}
		if len(entries) < PageSize && !issue.IsPull && counted >= want {
			break
		}
	}

	for len(comments) < n && start > 0 {
		before, err := c.CommentsBefore(ctx, issue.Number, start)
		if err != nil {
			return guard.CommentPage{}, err
		}
		var prepend []guard.Comment
		for _, cm := range before.Comments {
			if !seen[cm.ID] {
				seen[cm.ID] = true
				prepend = append(prepend, cm)
			}
		}
		comments = append(prepend, comments...)
		labels = append(before.Labels, labels...)
		start = before.Start
	}
	return guard.CommentPage{Comments: comments, Labels: labels, Start: start}, nil
}

// CommentsBefore returns the comments among the 50 timeline entries before
// offset start, oldest first, in one request, and the offset that page
// begins at. Timeline pages are 50-aligned: a start that is not a multiple
// of 50 is rounded up, so the page may repeat entries at or after start
// (never skip any); callers can drop them by comment ID. A start ≤ 0 returns
// an empty page without a request.
func (c *Client) CommentsBefore(ctx context.Context, number int64, start int) (guard.CommentPage, error) {
	if start <= 0 {
		return guard.CommentPage{Start: 0}, nil
	}
	end := ((start + PageSize - 1) / PageSize) * PageSize
	entries, err := c.timelinePage(ctx, number, end/PageSize)
	if err != nil {
		return guard.CommentPage{}, err
	}
	var comments []guard.Comment
	var labels []guard.LabelEvent
	for i, e := range entries {
		if e != nil && e.Type == typeComment {
			comments = append(comments, e.comment())
		}
		// Label events carry no id to drop repeats by: keep only those
		// before start, which the caller has not read.
		if e != nil && end-PageSize+i < start {
			if le, ok := e.labelEvent(); ok {
				labels = append(labels, le)
			}
		}
	}
	return guard.CommentPage{Comments: comments, Labels: labels, Start: end - PageSize}, nil
}

func fromSDKComment(cm *gitea.Comment) guard.Comment {
	author := cm.OriginalAuthor
	if cm.Poster != nil && cm.Poster.UserName != "" {
		author = cm.Poster.UserName
	}
	return guard.Comment{
		ID:        cm.ID,
		Author:    author,
		Body:      cm.Body,
		HTMLURL:   cm.HTMLURL,
		CreatedAt: cm.Created,
		UpdatedAt: cm.Updated,
	}
}

// CreateComment posts a comment on the issue.
func (c *Client) CreateComment(ctx context.Context, number int64, body string) (guard.Comment, error) {
	sc, err := c.sdk(ctx)
	if err != nil {
		return guard.Comment{}, err
	}
	cm, resp, err := sc.CreateIssueComment(c.owner, c.repo, number, gitea.CreateIssueCommentOption{Body: body})
	if err := c.sdkError(ctx, http.MethodPost, c.issuePath(number)+"/comments", resp, err); err != nil {
		return guard.Comment{}, err
	}
	return fromSDKComment(cm), nil
}

// EditComment replaces a comment's body.
func (c *Client) EditComment(ctx context.Context, id int64, body string) (guard.Comment, error) {
	sc, err := c.sdk(ctx)
	if err != nil {
		return guard.Comment{}, err
	}
	cm, resp, err := sc.EditIssueComment(c.owner, c.repo, id, gitea.EditIssueCommentOption{Body: body})
	if err := c.sdkError(ctx, http.MethodPatch, c.commentPath(id), resp, err); err != nil {
		return guard.Comment{}, err
	}
	return fromSDKComment(cm), nil
}

// DeleteComment deletes a comment.
func (c *Client) DeleteComment(ctx context.Context, id int64) error {
	sc, err := c.sdk(ctx)
	if err != nil {
		return err
	}
	resp, err := sc.DeleteIssueComment(c.owner, c.repo, id)
	return c.sdkError(ctx, http.MethodDelete, c.commentPath(id), resp, err)
}

func (c *Client) commentPath(id int64) string {
	return c.repoPath() + "/issues/comments/" + strconv.FormatInt(id, 10)
}

// repoLabels lists all labels of the repository, 50 per page.
func (c *Client) repoLabels(ctx context.Context) ([]*gitea.Label, error) {
	sc, err := c.sdk(ctx)
	if err != nil {
		return nil, err
	}
	var all []*gitea.Label
	for page := 1; page <= maxPages; page++ {
		labels, resp, err := sc.ListRepoLabels(c.owner, c.repo, gitea.ListLabelsOptions{
			ListOptions: gitea.ListOptions{Page: page, PageSize: PageSize},
		})
		if err := c.sdkError(ctx, http.MethodGet, c.repoPath()+"/labels", resp, err); err != nil {
			return nil, err
		}
		all = append(all, labels...)
		if len(labels) < PageSize {
			return all, nil
		}
	}
	return nil, fmt.Errorf("forge: labels of %s/%s: no end after %d pages", c.owner, c.repo, maxPages)
}

// AddLabels attaches the named labels to the issue. It lists the
// repository's labels, creates the missing ones (from specs, or with
// DefaultLabelColor), and attaches them all by id in one request: Gitea
// silently ignores names it does not know, ids it does not. Gitea does not
// keep label names unique: two runs creating the same missing label at the
// same moment may both create it; either copy then serves.
func (c *Client) AddLabels(ctx context.Context, number int64, names []string, specs []guard.LabelSpec) error {
	var wanted []string
	dup := make(map[string]bool)
	for _, n := range names {
		if n != "" && !dup[n] {
			dup[n] = true
			wanted = append(wanted, n)
		}
	}
	if len(wanted) == 0 {
		return nil
	}
	existing, err := c.repoLabels(ctx)
	if err != nil {
		return err
	}
	byName := make(map[string]int64, len(existing))
	for _, l := range existing {
		if l != nil {
			if _, ok := byName[l.Name]; !ok {
				byName[l.Name] = l.ID
			}
		}
	}
	specByName := make(map[string]guard.LabelSpec, len(specs))
	for _, s := range specs {
		specByName[s.Name] = s
	}
	sc, err := c.sdk(ctx)
	if err != nil {
		return err
	}
	ids := make([]int64, 0, len(wanted))
	for _, name := range wanted {
		id, ok := byName[name]
		if !ok {
			spec := specByName[name]
			color := strings.TrimPrefix(spec.Color, "#")
			if color == "" {
				color = DefaultLabelColor
			}
			l, resp, err := sc.CreateLabel(c.owner, c.repo, gitea.CreateLabelOption{
				Name:        name,
				Color:       "#" + color,
				Description: spec.Description,
			})
			if err := c.sdkError(ctx, http.MethodPost, c.repoPath()+"/labels", resp, err); err != nil {
				return fmt.Errorf("creating label %q: %w", name, err)
			}
			id = l.ID
		}
		ids = append(ids, id)
	}
	_, resp, err := sc.AddIssueLabels(c.owner, c.repo, number, gitea.IssueLabelsOption{Labels: ids})
	return c.sdkError(ctx, http.MethodPost, c.issuePath(number)+"/labels", resp, err)
}

// RemoveLabel detaches the label from the issue, by id (looked up by name
// among the repository's labels if the id is 0).
func (c *Client) RemoveLabel(ctx context.Context, number int64, label guard.Label) error {
	id := label.ID
	if id == 0 {
		labels, err := c.repoLabels(ctx)
		if err != nil {
			return err
		}
		for _, l := range labels {
			if l != nil && l.Name == label.Name {
				id = l.ID
				break
			}
		}
		if id == 0 {
			return fmt.Errorf("removing label %q: no such label in %s/%s: %w", label.Name, c.owner, c.repo, guard.ErrNotFound)
		}
	}
	sc, err := c.sdk(ctx)
	if err != nil {
		return err
	}
	resp, err := sc.DeleteIssueLabel(c.owner, c.repo, number, id)
	return c.sdkError(ctx, http.MethodDelete, c.issuePath(number)+"/labels/"+strconv.FormatInt(id, 10), resp, err)
}

// Lock locks the issue's conversation with the reason. Gitea requires
// repository admin (403, wrapping guard.ErrForbidden, otherwise) and
// answers 204 for an issue that is already locked, which is success.
func (c *Client) Lock(ctx context.Context, number int64, reason string) error {
	in := struct {
		Reason string `json:"lock_reason"`
	}{reason}
	err := c.do(ctx, http.MethodPut, c.issuePath(number)+"/lock", in, nil)
	var he *HTTPError
	if errors.As(err, &he) && (he.Status == http.StatusConflict || he.Status == http.StatusUnprocessableEntity) &&
		strings.Contains(strings.ToLower(he.Body), "already locked") {
		return nil
	}
	return err
}

// Self returns the login of the token's user.
func (c *Client) Self(ctx context.Context) (string, error) {
	sc, err := c.sdk(ctx)
	if err != nil {
		return "", err
	}
	u, resp, err := sc.GetMyUserInfo()
	if err := c.sdkError(ctx, http.MethodGet, "/user", resp, err); err != nil {
		return "", err
	}
	return u.UserName, nil
}

// IsRepoAdmin reports whether user has admin (or owner) permission on the
// repository: one GET of the collaborator's permission. Gitea answers it
// only to repository admins (and the user about themselves): with the
// Actions token it is an error wrapping guard.ErrForbidden.
func (c *Client) IsRepoAdmin(ctx context.Context, user string) (bool, error) {
	var p struct {
		Permission string `json:"permission"`
	}
	path := fmt.Sprintf("/repos/%s/%s/collaborators/%s/permission", url.PathEscape(c.owner), url.PathEscape(c.repo), url.PathEscape(user))
	if err := c.do(ctx, http.MethodGet, path, nil, &p); err != nil {
		return false, err
	}
	return p.Permission == "admin" || p.Permission == "owner", nil
}

// PullFiles lists the paths a pull request changes, 50 files per request.
// A renamed file contributes its old path as well as its new one.
func (c *Client) PullFiles(ctx context.Context, number int64) ([]string, error) {
	sc, err := c.sdk(ctx)
	if err != nil {
		return nil, err
	}
	var paths []string
	seen := make(map[string]bool)
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	for page := 1; page <= maxPages; page++ {
		files, resp, err := sc.ListPullRequestFiles(c.owner, c.repo, number, gitea.ListPullRequestFilesOptions{
			ListOptions: gitea.ListOptions{Page: page, PageSize: PageSize},
		})
		if err := c.sdkError(ctx, http.MethodGet, c.repoPath()+"/pulls/"+strconv.FormatInt(number, 10)+"/files", resp, err); err != nil {
			return nil, err
		}
		for _, f := range files {
			if f != nil {
				add(f.PreviousFilename)
				add(f.Filename)
			}
		}
		if len(files) < PageSize {
			return paths, nil
		}
	}
	return nil, fmt.Errorf("forge: files of pull request #%d: no end after %d pages", number, maxPages)
}
