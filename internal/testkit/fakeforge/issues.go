package fakeforge

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/posture"
)

// find is issue n, or a 404 (the lock held).
func (c *Client) find(n int64, verb string) (*issue, error) {
	if is := c.s.issues[n]; is != nil {
		return is, nil
	}
	return nil, notFound(verb, c.s.issuePath(n))
}

// Issue reads issue n: one request.
func (c *Client) Issue(_ context.Context, n int64) (issues.Issue, error) {
	if err := c.begin("Issue", http.MethodGet, c.s.issuePath(n)); err != nil {
		return issues.Issue{}, err
	}
	defer c.s.mu.Unlock()
	is, err := c.find(n, http.MethodGet)
	if err != nil {
		return issues.Issue{}, err
	}
	return is.view(), nil
}

// page splits timeline entries into their comments and the label events
// among the first labelsBefore of them.
func page(entries []entry, labelsBefore int) ([]issues.Comment, []issues.LabelEvent) {
	var cs []issues.Comment
	var ls []issues.LabelEvent
	for i, e := range entries {
		switch {
		case e.comment != nil:
			cs = append(cs, *e.comment)
		case e.label != nil && i < labelsBefore:
			ls = append(ls, *e.label)
		}
	}
	return cs, ls
}

// RecentComments reads the timeline back from its last page,
// forge.PageSize entries a page, until it holds n comments or reached the
// first entry, within forge.MaxTailPages pages: a request a page.
func (c *Client) RecentComments(_ context.Context, want issues.Issue, n int) (issues.CommentPage, error) {
	path := c.s.issuePath(want.Number) + "/timeline"
	if err := c.begin("RecentComments", http.MethodGet, path); err != nil {
		return issues.CommentPage{}, err
	}
	defer c.s.mu.Unlock()
	is, err := c.find(want.Number, http.MethodGet)
	if err != nil {
		return issues.CommentPage{}, err
	}
	tl := is.timeline
	last := max((len(tl)+forge.PageSize-1)/forge.PageSize, 1)
	var out issues.CommentPage
	p, read := last, 0
	for ; p >= 1; p-- {
		if len(out.Comments) >= n && p < last || read == forge.MaxTailPages {
			break
		}
		read++
		cs, ls := page(tl[(p-1)*forge.PageSize:min(p*forge.PageSize, len(tl))], forge.PageSize)
		out.Comments = append(cs, out.Comments...)
		out.Labels = append(ls, out.Labels...)
	}
	c.more(read - 1)
	out.Start = p * forge.PageSize
	out.Truncated = len(out.Comments) < n && p > 0
	return out, nil
}

// CommentsBefore reads the page that ends at or after start: its
// comments, and the label events before start. One request; none for a
// start ≤ 0.
func (c *Client) CommentsBefore(_ context.Context, n int64, start int) (issues.CommentPage, error) {
	if start <= 0 {
		return issues.CommentPage{}, nil
	}
	if err := c.begin("CommentsBefore", http.MethodGet, c.s.issuePath(n)+"/timeline"); err != nil {
		return issues.CommentPage{}, err
	}
	defer c.s.mu.Unlock()
	is, err := c.find(n, http.MethodGet)
	if err != nil {
		return issues.CommentPage{}, err
	}
	end := (start + forge.PageSize - 1) / forge.PageSize * forge.PageSize
	from := end - forge.PageSize
	if from >= len(is.timeline) {
		return issues.CommentPage{Start: from}, nil
	}
	cs, ls := page(is.timeline[from:min(end, len(is.timeline))], start-from)
	return issues.CommentPage{Comments: cs, Labels: ls, Start: from}, nil
}

// CommentsSince reads the comments updated at or after since (whole
// seconds, as Gitea compares them), oldest first: one request.
func (c *Client) CommentsSince(_ context.Context, n int64, since time.Time) ([]issues.Comment, error) {
	if err := c.begin("CommentsSince", http.MethodGet, c.s.issuePath(n)+"/comments"); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	is, err := c.find(n, http.MethodGet)
	if err != nil {
		return nil, err
	}
	var out []issues.Comment
	for _, e := range is.timeline {
		if e.comment != nil && !e.comment.UpdatedAt.Truncate(time.Second).Before(since.Truncate(time.Second)) {
			out = append(out, *e.comment)
		}
	}
	slices.SortFunc(out, func(a, b issues.Comment) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// FirstEditAfter is the first body edit after t, when the server shows
// the edit history (EditHistory): one request, sent without the token.
func (c *Client) FirstEditAfter(_ context.Context, n int64, t time.Time) (time.Time, bool) {
	if err := c.begin("FirstEditAfter", http.MethodGet, fmt.Sprintf("/%s/issues/%d/content-history/list", c.s.Repo(), n)); err != nil {
		return time.Time{}, false
	}
	defer c.s.mu.Unlock()
	is := c.s.issues[n]
	if !c.s.EditHistory || is == nil {
		return time.Time{}, false
	}
	for _, at := range is.edits {
		if at.After(t) {
			return at, true
		}
	}
	return time.Time{}, false
}

// PullFiles lists the paths pull request n changes: a request per page.
func (c *Client) PullFiles(_ context.Context, n int64) ([]string, error) {
	path := fmt.Sprintf("%s/pulls/%d/files", c.s.repoPath(), n)
	if err := c.begin("PullFiles", http.MethodGet, path); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	is := c.s.issues[n]
	if is == nil || !is.is.IsPull {
		return nil, notFound(http.MethodGet, path)
	}
	c.more(len(is.files) / forge.PageSize)
	return slices.Clone(is.files), nil
}

// File reads a file of the default branch: one request.
func (c *Client) File(_ context.Context, path string, most int64) ([]byte, error) {
	if err := c.begin("File", http.MethodGet, c.s.repoPath()+"/raw/"+path); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	return c.s.read(c.s.DefaultBranch, path, most)
}

// PullFile reads a file of pull request n's head: two requests.
func (c *Client) PullFile(_ context.Context, n int64, path string, most int64) ([]byte, error) {
	if err := c.begin("PullFile", http.MethodGet, fmt.Sprintf("%s/pulls/%d", c.s.repoPath(), n)); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	is := c.s.issues[n]
	if is == nil || !is.is.IsPull {
		return nil, notFound(http.MethodGet, fmt.Sprintf("%s/pulls/%d", c.s.repoPath(), n))
	}
	c.more(1)
	return c.s.read(is.head, path, most)
}

// read reads a file of branch (the lock held).
func (s *Server) read(branch, path string, most int64) ([]byte, error) {
	data, ok := s.branches[branch][path]
	if !ok {
		return nil, notFound(http.MethodGet, s.repoPath()+"/raw/"+path)
	}
	if int64(len(data)) > most {
		return nil, fmt.Errorf("%s is over %d bytes: %w", path, most, issues.ErrTooLarge)
	}
	return slices.Clone(data), nil
}

// Self is the client's login: one request.
func (c *Client) Self(context.Context) (string, error) {
	if err := c.begin("Self", http.MethodGet, "/user"); err != nil {
		return "", err
	}
	defer c.s.mu.Unlock()
	return c.user, nil
}

// EditBody writes issue n's body when its content version is still
// version (else 409, wrapping issues.ErrConflict): one request.
func (c *Client) EditBody(_ context.Context, n int64, body string, version int) (int, error) {
	path := c.s.issuePath(n)
	if err := c.begin("EditBody", http.MethodPatch, path); err != nil {
		return 0, err
	}
	defer c.s.mu.Unlock()
	is, err := c.find(n, http.MethodPatch)
	if err == nil {
		err = c.need("write", http.MethodPatch, path)
	}
	if err == nil {
		err = c.carry(http.MethodPatch, path, body)
	}
	if err != nil {
		return 0, err
	}
	if version != is.is.ContentVersion {
		return 0, status(http.MethodPatch, path, http.StatusConflict)
	}
	c.s.editBody(is, body, c.user)
	c.s.write(c, "EditBody", n, 0, body)
	c.s.notify(c.user, "edited", is, nil)
	return is.is.ContentVersion, nil
}

// editBody writes a body as Gitea does: a new content version, the edit
// in the history, by editor (the lock held).
func (s *Server) editBody(is *issue, body, editor string) {
	now := s.now()
	if len(is.revisions) == 0 {
		// Gitea keeps the opening's text as the history's first entry.
		is.revisions = append(is.revisions, issues.Revision{Editor: is.author, At: is.is.CreatedAt, Text: is.is.Body})
	}
	is.is.Body = body
	is.is.ContentVersion++
	is.is.UpdatedAt = now
	is.edits = append(is.edits, now)
	is.revisions = append(is.revisions, issues.Revision{Editor: editor, At: now, Text: body})
}

// Comment reads one comment of issue n by id: one request.
func (c *Client) Comment(_ context.Context, n, id int64) (issues.Comment, error) {
	path := fmt.Sprintf("%s/comments/%d", c.s.repoPath(), id)
	if err := c.begin("Comment", http.MethodGet, path); err != nil {
		return issues.Comment{}, err
	}
	defer c.s.mu.Unlock()
	if is := c.s.issues[n]; is != nil {
		for _, e := range is.timeline {
			if e.comment != nil && e.comment.ID == id {
				return *e.comment, nil
			}
		}
	}
	return issues.Comment{}, notFound(http.MethodGet, path)
}

// BodyHistory is issue n's body edit history, oldest first, when the
// server shows it (EditHistory; a private repository answers 404): one
// request, sent without the token.
func (c *Client) BodyHistory(_ context.Context, n int64) ([]issues.Revision, error) {
	path := fmt.Sprintf("/%s/issues/%d/content-history/list", c.s.Repo(), n)
	if err := c.begin("BodyHistory", http.MethodGet, path); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	is := c.s.issues[n]
	if !c.s.EditHistory || is == nil {
		return nil, notFound(http.MethodGet, path)
	}
	return slices.Clone(is.revisions), nil
}

// TitleChanges are issue n's title changes at or after since, oldest
// first: one request.
func (c *Client) TitleChanges(_ context.Context, n int64, since time.Time) ([]issues.TitleChange, error) {
	path := c.s.issuePath(n) + "/timeline"
	if err := c.begin("TitleChanges", http.MethodGet, path); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	is, err := c.find(n, http.MethodGet)
	if err != nil {
		return nil, err
	}
	var out []issues.TitleChange
	for _, t := range is.titles {
		if !t.At.Truncate(time.Second).Before(since.Truncate(time.Second)) {
			out = append(out, t)
		}
	}
	return out, nil
}

// Writers are the logins that can write the repository's issues, as
// Gitea 1.26 lists the repository's assignees (models/repo/user_repo.go,
// GetRepoAssignees): the accounts granted write or more; in an
// organisation, the members of a team of the repository with a unit at
// write or more, or with Pull requests at read; and a user who owns it,
// last (an organisation is listed by none of its teams). One request.
func (c *Client) Writers(context.Context) ([]string, error) {
	if err := c.begin("Writers", http.MethodGet, c.s.repoPath()+"/assignees"); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	s := c.s
	var out []string
	for login := range s.perms {
		if login != s.owner && s.may(login, "write") {
			out = append(out, login)
		}
	}
	for _, t := range s.teams {
		if s.Org && t.hasRepo && assigns(t.Units) {
			out = append(out, t.members...)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if !s.Org {
		out = append(out, s.owner)
	}
	return out, nil
}

// assigns says a team with units makes its members assignees: a unit at
// write or more, or Pull requests at read.
func assigns(units map[string]string) bool {
	for unit, mode := range units {
		if level[mode] >= level["write"] || unit == posture.Pulls && mode == "read" {
			return true
		}
	}
	return false
}

// CreateComment posts a comment as the client's user: one request.
func (c *Client) CreateComment(_ context.Context, n int64, body string) (issues.Comment, error) {
	path := c.s.issuePath(n) + "/comments"
	if err := c.begin("CreateComment", http.MethodPost, path); err != nil {
		return issues.Comment{}, err
	}
	defer c.s.mu.Unlock()
	is, err := c.find(n, http.MethodPost)
	if err == nil {
		err = c.carry(http.MethodPost, path, body)
	}
	if err != nil {
		return issues.Comment{}, err
	}
	s := c.s
	s.nextID++
	now := s.now()
	cm := issues.Comment{ID: s.nextID, Author: c.user, Body: body, CreatedAt: now, UpdatedAt: now,
		HTMLURL: fmt.Sprintf("%s/%s/issues/%d#issuecomment-%d", URL, s.Repo(), n, s.nextID)}
	is.timeline = append(is.timeline, entry{comment: &cm})
	s.write(c, "CreateComment", n, cm.ID, body)
	s.notify(c.user, "created", is, map[string]any{"comment": apiComment(cm), "is_pull": is.is.IsPull})
	return cm, nil
}

// EditComment replaces a comment's body (its author's, or a writer's):
// one request.
func (c *Client) EditComment(_ context.Context, id int64, body string) (issues.Comment, error) {
	path := fmt.Sprintf("%s/issues/comments/%d", c.s.repoPath(), id)
	if err := c.begin("EditComment", http.MethodPatch, path); err != nil {
		return issues.Comment{}, err
	}
	defer c.s.mu.Unlock()
	is, i := c.s.comment(id)
	if i < 0 {
		return issues.Comment{}, notFound(http.MethodPatch, path)
	}
	cm := is.timeline[i].comment
	if cm.Author != c.user {
		if err := c.need("write", http.MethodPatch, path); err != nil {
			return issues.Comment{}, err
		}
	}
	if err := c.carry(http.MethodPatch, path, body); err != nil {
		return issues.Comment{}, err
	}
	old := cm.Body
	cm.Body, cm.UpdatedAt = body, c.s.now()
	c.s.write(c, "EditComment", is.is.Number, id, body)
	c.s.notify(c.user, "edited", is, map[string]any{"comment": apiComment(*cm), "is_pull": is.is.IsPull,
		"changes": map[string]any{"body": map[string]any{"from": old}}})
	return *cm, nil
}

// DeleteComment deletes a comment (its author's, or a writer's): one
// request.
func (c *Client) DeleteComment(_ context.Context, id int64) error {
	path := fmt.Sprintf("%s/issues/comments/%d", c.s.repoPath(), id)
	if err := c.begin("DeleteComment", http.MethodDelete, path); err != nil {
		return err
	}
	defer c.s.mu.Unlock()
	is, i := c.s.comment(id)
	if i < 0 {
		return notFound(http.MethodDelete, path)
	}
	if is.timeline[i].comment.Author != c.user {
		if err := c.need("write", http.MethodDelete, path); err != nil {
			return err
		}
	}
	is.timeline = slices.Delete(is.timeline, i, i+1)
	c.s.write(c, "DeleteComment", is.is.Number, id, "")
	return nil
}

// AddLabels is AttachLabels without its answer.
func (c *Client) AddLabels(ctx context.Context, n int64, names []string, specs []issues.LabelSpec) error {
	_, err := c.attach(ctx, "AddLabels", n, names, specs)
	return err
}

// AttachLabels attaches labels by name, creating the missing ones from
// specs, and answers the issue's labels after: a request to list the
// repository's labels, one per label created, one to attach.
func (c *Client) AttachLabels(ctx context.Context, n int64, names []string, specs []issues.LabelSpec) ([]issues.Label, error) {
	return c.attach(ctx, "AttachLabels", n, names, specs)
}

func (c *Client) attach(_ context.Context, method string, n int64, names []string, specs []issues.LabelSpec) ([]issues.Label, error) {
	path := c.s.issuePath(n) + "/labels"
	var wanted []string
	for _, name := range names {
		if name != "" && !slices.Contains(wanted, name) {
			wanted = append(wanted, name)
		}
	}
	if len(wanted) == 0 {
		return nil, nil
	}
	if err := c.begin(method, http.MethodPost, path); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	is, err := c.find(n, http.MethodPost)
	if err == nil {
		err = c.need("write", http.MethodPost, path)
	}
	if err == nil {
		err = c.carry(http.MethodPost, path, strings.Join(wanted, "\n"))
	}
	if err != nil {
		return nil, err
	}
	c.more(1)
	for _, name := range wanted {
		if slices.ContainsFunc(c.s.labels, func(l port.RepoLabel) bool { return l.Name == name }) {
			continue
		}
		c.more(1)
		c.s.createLabel(c, specFor(name, specs))
	}
	s := c.s
	added := []map[string]any{}
	for _, name := range wanted {
		l := s.label(issues.Label{Name: name})
		if slices.ContainsFunc(is.is.Labels, func(have issues.Label) bool { return have.ID == l.ID }) {
			continue
		}
		is.is.Labels = append(is.is.Labels, l)
		s.nextID++
		is.timeline = append(is.timeline, entry{label: &issues.LabelEvent{Label: l.Name, LabelID: l.ID, Added: true, Actor: c.user, At: s.now()}})
		added = append(added, s.apiLabel(l))
	}
	s.write(c, method, n, 0, strings.Join(wanted, ", "))
	s.notify(c.user, "label_updated", is, map[string]any{"changes": map[string]any{"added_labels": added, "removed_labels": nil}})
	return slices.Clone(is.is.Labels), nil
}

// RemoveLabel detaches a label (by id; by name when its id is 0): one
// request, and one more to look the name up.
func (c *Client) RemoveLabel(_ context.Context, n int64, label issues.Label) error {
	path := fmt.Sprintf("%s/labels/%d", c.s.issuePath(n), label.ID)
	if err := c.begin("RemoveLabel", http.MethodDelete, path); err != nil {
		return err
	}
	defer c.s.mu.Unlock()
	is, err := c.find(n, http.MethodDelete)
	if err == nil {
		err = c.need("write", http.MethodDelete, path)
	}
	if err != nil {
		return err
	}
	if label.ID == 0 {
		c.more(1)
	}
	i := slices.IndexFunc(is.is.Labels, func(l issues.Label) bool {
		return label.ID != 0 && l.ID == label.ID || label.ID == 0 && l.Name == label.Name
	})
	if i < 0 {
		return notFound(http.MethodDelete, path)
	}
	l := is.is.Labels[i]
	is.is.Labels = slices.Delete(is.is.Labels, i, i+1)
	c.s.nextID++
	is.timeline = append(is.timeline, entry{label: &issues.LabelEvent{Label: l.Name, LabelID: l.ID, Added: false, Actor: c.user, At: c.s.now()}})
	c.s.write(c, "RemoveLabel", n, l.ID, l.Name)
	c.s.notify(c.user, "label_updated", is, map[string]any{"changes": map[string]any{"added_labels": nil, "removed_labels": []map[string]any{c.s.apiLabel(l)}}})
	return nil
}

// Lock locks the issue: a repository admin's; one request.
func (c *Client) Lock(_ context.Context, n int64, reason string) error {
	path := c.s.issuePath(n) + "/lock"
	if err := c.begin("Lock", http.MethodPut, path); err != nil {
		return err
	}
	defer c.s.mu.Unlock()
	is, err := c.find(n, http.MethodPut)
	if err == nil {
		err = c.need("admin", http.MethodPut, path)
	}
	if err != nil {
		return err
	}
	is.is.Locked = true
	c.s.write(c, "Lock", n, 0, reason)
	return nil
}

// SetAssignees replaces the issue's assignees: one request.
func (c *Client) SetAssignees(_ context.Context, n int64, logins []string) error {
	path := c.s.issuePath(n)
	if err := c.begin("SetAssignees", http.MethodPatch, path); err != nil {
		return err
	}
	defer c.s.mu.Unlock()
	is, err := c.find(n, http.MethodPatch)
	if err == nil {
		err = c.need("write", http.MethodPatch, path)
	}
	if err == nil {
		err = c.carry(http.MethodPatch, path, strings.Join(logins, "\n"))
	}
	if err != nil {
		return err
	}
	is.assignees = slices.Clone(logins)
	c.s.write(c, "SetAssignees", n, 0, strings.Join(logins, ", "))
	return nil
}
