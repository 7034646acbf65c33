package forge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// PageSize is Gitea's default [api] MAX_RESPONSE_ITEMS, its largest page out
// of the box.
const PageSize = 50

// maxPages stops a server that ignores paging.
const maxPages = 2000

// DefaultLabelColor is for a label created without a spec.
const DefaultLabelColor = "ededed"

// apiIssue exists because the SDK's Issue lacks content_version.
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
	Created        time.Time   `json:"created_at"`
	PullRequest    presentJSON `json:"pull_request"`
	Repository     *struct {
		ID    int64  `json:"id"`
		Owner string `json:"owner"`
	} `json:"repository"`
}

// presentJSON records a JSON value present and not null.
type presentJSON bool

func (p *presentJSON) UnmarshalJSON(b []byte) error {
	*p = presentJSON(string(b) != "null")
	return nil
}

func (a apiIssue) toGuard() issues.Issue {
	is := issues.Issue{
		Number:    a.Number,
		Title:     a.Title,
		Body:      a.Body,
		Labels:    make([]issues.Label, 0, len(a.Labels)),
		Locked:    a.IsLocked,
		IsPull:    bool(a.PullRequest),
		State:     a.State,
		Comments:  a.Comments,
		NoCAS:     a.ContentVersion == nil,
		UpdatedAt: a.Updated,
		CreatedAt: a.Created,
	}
	if a.ContentVersion != nil {
		is.ContentVersion = *a.ContentVersion
	}
	if a.Repository != nil {
		is.RepoID, is.RepoOwner = a.Repository.ID, a.Repository.Owner
	}
	for _, l := range a.Labels {
		is.Labels = append(is.Labels, issues.Label{ID: l.ID, Name: l.Name})
	}
	return is
}

func (c *Client) issuePath(number int64) string {
	return c.repoPath() + "/issues/" + strconv.FormatInt(number, 10)
}

// Issue reads one issue or pull request: one GET, decoded locally so that
// content_version (absent from the SDK's Issue) is kept. A body over
// issues.MaxBodyBytes is not kept (Issue.BodyTooLarge); an answer over the
// cap costs two more requests (see readIssue).
func (c *Client) Issue(ctx context.Context, number int64) (issues.Issue, error) {
	return c.readIssue(ctx, number)
}

// EditBody PATCHes with content_version; Gitea 1.26 answers a stale one 409
// (issues.ErrConflict). It returns the new version.
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
		ID   int64  `json:"id"`
		Name string `json:"name"`
	} `json:"label"`
	Created time.Time `json:"created_at"`
	Updated time.Time `json:"updated_at"`
}

// Timeline entry types (Gitea's CommentType); the comment count includes
// "review".
const (
	typeComment = "comment"
	typeReview  = "review"
	typeLabel   = "label"
)

// labelEvent: Gitea stores "1" to add, nothing to remove.
func (e *timelineEntry) labelEvent() (issues.LabelEvent, bool) {
	if e.Type != typeLabel || e.Label == nil || e.Label.Name == "" {
		return issues.LabelEvent{}, false
	}
	le := issues.LabelEvent{Label: e.Label.Name, LabelID: e.Label.ID, Added: e.Body == "1", At: e.Created}
	if e.User != nil {
		le.Actor = e.User.Login
	}
	return le, true
}

func (e *timelineEntry) comment() issues.Comment {
	author := e.OriginalAuthor
	if e.User != nil && e.User.Login != "" {
		author = e.User.Login
	}
	return issues.Comment{
		ID:        e.ID,
		Author:    author,
		Body:      e.Body,
		HTMLURL:   e.HTMLURL,
		CreatedAt: e.Created,
		UpdatedAt: e.Updated,
	}
}

// timelinePage reads timeline entries [(page-1)*PageSize, page*PageSize),
// oldest first. Gitea drops some rows after paging (review comments, hidden
// cross-references), so a short page need not be the last, and its
// X-Total-Count is no total. One request; more around entries too large to
// read.
func (c *Client) timelinePage(ctx context.Context, number int64, page int) ([]rowEntry, error) {
	return c.timelineRows(ctx, number, (page-1)*PageSize, PageSize)
}

// Bounds of one RecentComments. Gitea 1.26's timeline has no total count
// (its X-Total-Count is the page's length), no reverse order and no type
// filter, and its since/before filters select by updated_at, so the only
// way to the last page of a timeline whose length the comment count does
// not tell is to look for it.
const (
	// maxEndProbes: doubling then halving finds the last of 2^20 pages in 40
	// requests; longer is an error.
	maxEndProbes = 40
	// MaxTailPages reads back up to 4 pages (200 entries), fewer when n
	// comments show earlier.
	MaxTailPages = 4
)

// timeline reads each page at most once.
type timeline struct {
	c      *Client
	number int64
	isPull bool
	pages  map[int][]rowEntry
}

func (t *timeline) page(ctx context.Context, p int) ([]rowEntry, error) {
	if e, ok := t.pages[p]; ok {
		return e, nil
	}
	e, err := t.c.timelinePage(ctx, t.number, p)
	if err != nil {
		return nil, err
	}
	t.pages[p] = e
	return e, nil
}

// lastPage finds the timeline's last non-empty page after page lo. It
// doubles its step until a page is empty, then halves the gap; a short page
// is confirmed by the empty page after it, since Gitea may have filtered
// it. For 20,000 entries that is about 18 requests.
func (t *timeline) lastPage(ctx context.Context, lo int) (int, error) {
	hi := 0 // the first page known to be empty; 0: none yet
	step := 1
	next := lo + 1
	for probes := 0; hi == 0 || hi-lo > 1; probes++ {
		if probes == maxEndProbes {
			return 0, fmt.Errorf("forge: timeline of #%d: no end found after %d requests (more than %d pages)", t.number, maxEndProbes, lo)
		}
		e, err := t.page(ctx, next)
		if err != nil {
			return 0, err
		}
		if rows(e) == 0 {
			hi = next
		} else {
			lo = next
		}
		switch {
		case rows(e) > 0 && rows(e) < PageSize:
			next = lo + 1 // most likely the last page: confirm
		case hi == 0:
			step *= 2
			next = lo + step
		default:
			next = lo + (hi-lo)/2
		}
		if hi != 0 && next >= hi {
			next = lo + (hi-lo)/2
		}
	}
	return lo, nil
}

// RecentComments returns at least the last n comments, oldest first, with
// the label events read on the way, reading back from the last page
// (docs/operations.md#how-the-timelines-tail-is-read). The comment count
// places that page: one request, two for a pull request (Gitea filters its
// review comments). Other entries cost a logarithmic search. Past
// MaxTailPages it returns the newest found, Truncated set.
func (c *Client) RecentComments(ctx context.Context, issue issues.Issue, n int) (issues.CommentPage, error) {
	n = max(n, 0)
	t := &timeline{c: c, number: issue.Number, isPull: issue.IsPull, pages: map[int][]rowEntry{}}
	last, err := t.endPage(ctx, issue, n)
	if err != nil {
		return issues.CommentPage{}, err
	}
	return t.readBack(ctx, last, n)
}

// endPage predicts the last page from the comment count when comments are
// the tail, else searches (lastPage).
func (t *timeline) endPage(ctx context.Context, issue issues.Issue, n int) (int, error) {
	first := max(issue.Comments-n, 0)/PageSize + 1
	entries, err := t.page(ctx, first)
	if err != nil {
		return 0, err
	}
	// Fewer counted entries than want on a short page: Gitea filtered some;
	// not the end.
	want := issue.Comments - (first-1)*PageSize
	seenCounted := counted(entries)
	atEnd := func(e []rowEntry) bool {
		return rows(e) < PageSize && !issue.IsPull && seenCounted >= want
	}
	last, found := first, rows(entries) == 0 || atEnd(entries)
	// A comment tail ends within the predicted pages.
	for p := first + 1; !found && p <= first+(n+PageSize-1)/PageSize+1; p++ {
		e, err := t.page(ctx, p)
		if err != nil {
			return 0, err
		}
		if rows(e) == 0 {
			found = true
			break
		}
		last, seenCounted = p, seenCounted+counted(e)
		found = atEnd(e)
	}
	if found {
		return last, nil
	}
	// Other entries (label changes, locks, ...) push it further.
	return t.lastPage(ctx, last)
}

// readBack reads back from last until n comments or the first entry, within
// MaxTailPages new pages.
func (t *timeline) readBack(ctx context.Context, last, n int) (issues.CommentPage, error) {
	var tail tailEntries
	tail.seen = make(map[int64]bool)
	page, read := last, 0
	for ; page >= 1; page-- {
		if len(tail.comments) >= n && page < last {
			break
		}
		if _, cached := t.pages[page]; !cached {
			if read == MaxTailPages {
				break
			}
			read++
		}
		entries, err := t.page(ctx, page)
		if err != nil {
			return issues.CommentPage{}, err
		}
		tail.prepend(entries)
	}
	return issues.CommentPage{
		Comments:  tail.comments,
		Labels:    tail.labels,
		Start:     page * PageSize, // the first page read is page+1
		Truncated: len(tail.comments) < n && page > 0,
		Unread:    tail.unread,
	}, nil
}

// tailEntries gathers backward pages oldest first, each entry once.
type tailEntries struct {
	comments []issues.Comment
	labels   []issues.LabelEvent
	seen     map[int64]bool
	unread   int
}

// prepend adds an earlier page's new entries; entries given up count as
// Unread.
func (b *tailEntries) prepend(entries []rowEntry) {
	var cs []issues.Comment
	var ls []issues.LabelEvent
	for _, e := range entries {
		if e.unread == 0 && b.seen[e.ID] {
			continue
		}
		switch {
		case e.unread > 0:
			b.unread += e.unread
			cs = append(cs, e.comment())
		case e.Type == typeComment:
			b.seen[e.ID] = true
			cs = append(cs, e.comment())
		case e.Type == typeLabel:
			if le, ok := e.labelEvent(); ok {
				b.seen[e.ID] = true
				ls = append(ls, le)
			}
		}
	}
	b.comments = append(cs, b.comments...)
	b.labels = append(ls, b.labels...)
}

// counted is how many entries the comment count includes.
func counted(entries []rowEntry) int {
	k := 0
	for _, e := range entries {
		if e.Type == typeComment || e.Type == typeReview {
			k++
		}
	}
	return k
}

// CommentsBefore returns the comments among the 50 timeline entries before
// offset start, oldest first, and the offset the page begins at. Pages are
// 50-aligned, so start is rounded up and entries may repeat (never be
// skipped); callers drop repeats by ID. A start ≤ 0 makes no request.
func (c *Client) CommentsBefore(ctx context.Context, number int64, start int) (issues.CommentPage, error) {
	if start <= 0 {
		return issues.CommentPage{Start: 0}, nil
	}
	end := ((start + PageSize - 1) / PageSize) * PageSize
	entries, err := c.timelinePage(ctx, number, end/PageSize)
	if err != nil {
		return issues.CommentPage{}, err
	}
	var comments []issues.Comment
	var labels []issues.LabelEvent
	unread := 0
	for _, e := range entries {
		if e.isComment() {
			comments = append(comments, e.comment())
			unread += e.unread
		}
		// Label events have no id: keep only unread ones before start.
		if e.row < start {
			if le, ok := e.labelEvent(); ok {
				labels = append(labels, le)
			}
		}
	}
	return issues.CommentPage{Comments: comments, Labels: labels, Start: end - PageSize, Unread: unread}, nil
}

func fromSDKComment(cm *gitea.Comment) issues.Comment {
	author := cm.OriginalAuthor
	if cm.Poster != nil && cm.Poster.UserName != "" {
		author = cm.Poster.UserName
	}
	return issues.Comment{
		ID:        cm.ID,
		Author:    author,
		Body:      cm.Body,
		HTMLURL:   cm.HTMLURL,
		CreatedAt: cm.Created,
		UpdatedAt: cm.Updated,
	}
}

// CreateComment posts a comment on the issue.
func (c *Client) CreateComment(ctx context.Context, number int64, body string) (issues.Comment, error) {
	sc, err := c.sdk(ctx)
	if err != nil {
		return issues.Comment{}, err
	}
	cm, resp, err := sc.CreateIssueComment(c.owner, c.repo, number, gitea.CreateIssueCommentOption{Body: body})
	if err := c.sdkError(ctx, http.MethodPost, c.issuePath(number)+"/comments", resp, err); err != nil {
		return issues.Comment{}, err
	}
	return fromSDKComment(cm), nil
}

// EditComment replaces a comment's body.
func (c *Client) EditComment(ctx context.Context, id int64, body string) (issues.Comment, error) {
	sc, err := c.sdk(ctx)
	if err != nil {
		return issues.Comment{}, err
	}
	cm, resp, err := sc.EditIssueComment(c.owner, c.repo, id, gitea.EditIssueCommentOption{Body: body})
	if err := c.sdkError(ctx, http.MethodPatch, c.commentPath(id), resp, err); err != nil {
		return issues.Comment{}, err
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

// AddLabels attaches the named labels, creating missing ones (from specs,
// or with DefaultLabelColor), by id in one request: Gitea silently ignores
// names it does not know. Label names are not unique, so two runs may both
// create one; either copy serves.
func (c *Client) AddLabels(ctx context.Context, number int64, names []string, specs []issues.LabelSpec) error {
	_, err := c.AttachLabels(ctx, number, names, specs)
	return err
}

// AttachLabels is AddLabels, answering the issue's labels after the write
// (by id, as the server's answer gives them): the ids of the labels the
// guard adds go into its ledger record at no extra request.
func (c *Client) AttachLabels(ctx context.Context, number int64, names []string, specs []issues.LabelSpec) ([]issues.Label, error) {
	var wanted []string
	dup := make(map[string]bool)
	for _, n := range names {
		if n != "" && !dup[n] {
			dup[n] = true
			wanted = append(wanted, n)
		}
	}
	if len(wanted) == 0 {
		return nil, nil
	}
	existing, err := c.repoLabels(ctx)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]int64, len(existing))
	for _, l := range existing {
		if l != nil {
			if _, ok := byName[l.Name]; !ok {
				byName[l.Name] = l.ID
			}
		}
	}
	specByName := make(map[string]issues.LabelSpec, len(specs))
	for _, s := range specs {
		specByName[s.Name] = s
	}
	sc, err := c.sdk(ctx)
	if err != nil {
		return nil, err
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
				return nil, fmt.Errorf("creating label %q: %w", name, err)
			}
			id = l.ID
		}
		ids = append(ids, id)
	}
	after, resp, err := sc.AddIssueLabels(c.owner, c.repo, number, gitea.IssueLabelsOption{Labels: ids})
	if err := c.sdkError(ctx, http.MethodPost, c.issuePath(number)+"/labels", resp, err); err != nil {
		return nil, err
	}
	out := make([]issues.Label, 0, len(after))
	for _, l := range after {
		if l != nil {
			out = append(out, issues.Label{ID: l.ID, Name: l.Name})
		}
	}
	return out, nil
}

// RemoveLabel detaches by id, looked up by name when 0.
func (c *Client) RemoveLabel(ctx context.Context, number int64, label issues.Label) error {
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
			return fmt.Errorf("removing label %q: no such label in %s/%s: %w", label.Name, c.owner, c.repo, issues.ErrNotFound)
		}
	}
	sc, err := c.sdk(ctx)
	if err != nil {
		return err
	}
	resp, err := sc.DeleteIssueLabel(c.owner, c.repo, number, id)
	return c.sdkError(ctx, http.MethodDelete, c.issuePath(number)+"/labels/"+strconv.FormatInt(id, 10), resp, err)
}

// Lock needs repository admin (else issues.ErrForbidden); Gitea's 204 for a
// locked issue is success.
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
// Actions token it is an error wrapping issues.ErrForbidden.
func (c *Client) IsRepoAdmin(ctx context.Context, user string) (bool, error) {
	p, err := c.Permission(ctx, user)
	return p == "admin" || p == "owner", err
}

// Permission returns user's permission on the repository: none, read,
// write, admin or owner. One GET. Gitea answers it to repository admins
// and to the user about themselves (the meter asks with the agent's own
// token); others get an error wrapping issues.ErrForbidden.
func (c *Client) Permission(ctx context.Context, user string) (string, error) {
	var p struct {
		Permission string `json:"permission"`
	}
	path := fmt.Sprintf("/repos/%s/%s/collaborators/%s/permission", url.PathEscape(c.owner), url.PathEscape(c.repo), url.PathEscape(user))
	if err := c.do(ctx, http.MethodGet, path, nil, &p); err != nil {
		return "", err
	}
	return p.Permission, nil
}

// PullFiles reads 50 files a request; a rename lists old and new paths.
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

// File reads a file of the default branch through the SDK's raw file
// request (one GET), at most max bytes: a longer file is an error naming
// it, and a missing one an error wrapping issues.ErrNotFound.
func (c *Client) File(ctx context.Context, path string, max int64) ([]byte, error) {
	return c.fileAt(ctx, "", path, max)
}

// PullFile reads a file as the head commit of pull request number holds
// it (two GETs: the pull request's head, then the file at it), at most max
// bytes; a file the head lacks is an error wrapping issues.ErrNotFound.
// The head is named by its SHA: Gitea reads a ref it does not know from
// the default branch instead.
func (c *Client) PullFile(ctx context.Context, number int64, path string, max int64) ([]byte, error) {
	var pr struct {
		Head struct {
			SHA string `json:"sha"`
		} `json:"head"`
	}
	if err := c.do(ctx, http.MethodGet, c.repoPath()+"/pulls/"+strconv.FormatInt(number, 10), nil, &pr); err != nil {
		return nil, err
	}
	if !commitSHA.MatchString(pr.Head.SHA) {
		return nil, fmt.Errorf("forge: pull request #%d names no head commit (%q)", number, pr.Head.SHA)
	}
	return c.fileAt(ctx, pr.Head.SHA, path, max)
}

// commitSHA matches a full commit id (SHA-1 or SHA-256).
var commitSHA = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)

// fileAt reads a file at ref ("": the default branch).
func (c *Client) fileAt(ctx context.Context, ref, path string, max int64) ([]byte, error) {
	sc, err := c.sdk(ctx)
	if err != nil {
		return nil, err
	}
	rc, resp, err := sc.GetFileReader(c.owner, c.repo, ref, path)
	if err := c.sdkError(ctx, http.MethodGet, c.repoPath()+"/raw/"+path, resp, err); err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, max+1))
	if err != nil {
		return nil, c.transportError(ctx, http.MethodGet, "/api/v1"+c.repoPath()+"/raw/"+path, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is over %d bytes: %w", path, max, issues.ErrTooLarge)
	}
	return data, nil
}

// CreateLabels: one list, one create per missing label; returns every label
// after.
func (c *Client) CreateLabels(ctx context.Context, specs []issues.LabelSpec) ([]issues.Label, error) {
	repo, err := c.Labels(ctx)
	if err != nil {
		return nil, err
	}
	all := make([]issues.Label, 0, len(repo))
	for _, l := range repo {
		all = append(all, issues.Label{ID: l.ID, Name: l.Name})
	}
	sc, err := c.sdk(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range specs {
		if slices.ContainsFunc(all, func(l issues.Label) bool { return l.Name == s.Name }) {
			continue
		}
		color := strings.TrimPrefix(s.Color, "#")
		if color == "" {
			color = DefaultLabelColor
		}
		l, resp, err := sc.CreateLabel(c.owner, c.repo, gitea.CreateLabelOption{Name: s.Name, Color: "#" + color, Description: s.Description})
		if err := c.sdkError(ctx, http.MethodPost, c.repoPath()+"/labels", resp, err); err != nil {
			return nil, fmt.Errorf("creating label %q: %w", s.Name, err)
		}
		all = append(all, issues.Label{ID: l.ID, Name: l.Name})
	}
	return all, nil
}
