package cli

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/settings"
)

// agreeClock is the server's and the commands' clock: fixed, moved on by
// the test a minute at a time, so every timestamp is deterministic.
type agreeClock struct{ t time.Time }

func (c *agreeClock) now() time.Time { return c.t }

// tick moves the clock on by a minute.
func (c *agreeClock) tick() { c.t = c.t.Add(time.Minute) }

// agreePageSize is the timeline's page size, as internal/forge reads it.
const agreePageSize = 50

// agreeTailPages bounds the pages RecentComments reads back from the
// last one, as internal/forge does.
const agreeTailPages = 4

// agreeEntry is one timeline entry: a comment, or a label added or removed.
type agreeEntry struct {
	comment *issues.Comment // nil for a label event
	label   *issues.LabelEvent
}

// agreeServer is one repository with one issue, as a Gitea server keeps
// them: the body with its content version (compare-and-swap edits), the
// labels with their ids, the timeline of comments and label events with
// ids, authors and timestamps, and the configuration file of the default
// branch. Every client (agreeForge) reads and writes the same state as its
// own user.
type agreeServer struct {
	clock     *agreeClock
	owner     string
	repo      string
	issue     issues.Issue
	assignees []string
	labels    []issues.Label // the repository's labels
	timeline  []agreeEntry   // oldest first
	config    []byte         // .gitea/gns-guard.yml; nil: the file does not exist
	nextID    int64          // the last id given to a comment or label
	writes    int            // writes made, by any client
	requests  int            // requests answered, by any client
}

// newAgreeServer serves issue number with body and labels (created with
// the issue: the timeline holds no event for them), and the configuration
// file config (nil: none).
func newAgreeServer(clock *agreeClock, number int64, body string, labels []string, config []byte) *agreeServer {
	s := &agreeServer{clock: clock, owner: "org", repo: "proj", config: config, nextID: 1000}
	s.issue = issues.Issue{
		Number:         number,
		Title:          "agreement",
		Body:           body,
		State:          "open",
		ContentVersion: 0, // as Gitea opens an issue
		UpdatedAt:      clock.now(),
	}
	for _, name := range labels {
		s.issue.Labels = append(s.issue.Labels, s.label(name))
	}
	return s
}

// as is a client of the server whose token is user's.
func (s *agreeServer) as(user string) *agreeForge { return &agreeForge{s: s, user: user} }

// label returns the repository's label named name, creating it.
func (s *agreeServer) label(name string) issues.Label {
	for _, l := range s.labels {
		if l.Name == name {
			return l
		}
	}
	s.nextID++
	l := issues.Label{ID: s.nextID, Name: name}
	s.labels = append(s.labels, l)
	return l
}

// comments counts the timeline's comments (the issue's comment count).
func (s *agreeServer) comments() int {
	n := 0
	for _, e := range s.timeline {
		if e.comment != nil {
			n++
		}
	}
	return n
}

// entry finds comment id in the timeline.
func (s *agreeServer) entry(id int64) int {
	return slices.IndexFunc(s.timeline, func(e agreeEntry) bool { return e.comment != nil && e.comment.ID == id })
}

// page splits timeline entries into their comments and label events.
func page(entries []agreeEntry, labelsBefore int) ([]issues.Comment, []issues.LabelEvent) {
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

// agreeForge is one user's client of an agreeServer: issues.Forge, and the
// assignee call `report` makes.
type agreeForge struct {
	s    *agreeServer
	user string
}

var _ issues.Forge = (*agreeForge)(nil)
var _ assigner = (*agreeForge)(nil)

func (f *agreeForge) check(number int64) error {
	f.s.requests++
	if number != f.s.issue.Number {
		return fmt.Errorf("issue %d: %w", number, issues.ErrNotFound)
	}
	return nil
}

func (f *agreeForge) Issue(_ context.Context, number int64) (issues.Issue, error) {
	if err := f.check(number); err != nil {
		return issues.Issue{}, err
	}
	is := f.s.issue
	is.Labels = slices.Clone(is.Labels)
	is.Comments = f.s.comments()
	return is, nil
}

func (f *agreeForge) EditBody(_ context.Context, number int64, body string, version int) (int, error) {
	if err := f.check(number); err != nil {
		return 0, err
	}
	is := &f.s.issue
	if version != is.ContentVersion {
		return 0, fmt.Errorf("PATCH issue %d with content version %d, now %d: %w", number, version, is.ContentVersion, issues.ErrConflict)
	}
	f.s.writes++
	is.Body = body
	is.ContentVersion++
	is.UpdatedAt = f.s.clock.now()
	return is.ContentVersion, nil
}

// RecentComments reads the timeline back from its last page, 50 entries
// a page, until it holds n comments or reached the first entry, within a
// budget of pages: as internal/forge does.
func (f *agreeForge) RecentComments(_ context.Context, is issues.Issue, n int) (issues.CommentPage, error) {
	if err := f.check(is.Number); err != nil {
		return issues.CommentPage{}, err
	}
	tl := f.s.timeline
	last := max((len(tl)+agreePageSize-1)/agreePageSize, 1)
	var out issues.CommentPage
	p, read := last, 0
	for ; p >= 1; p-- {
		if len(out.Comments) >= n && p < last || read == agreeTailPages {
			break
		}
		read++
		cs, ls := page(tl[(p-1)*agreePageSize:min(p*agreePageSize, len(tl))], agreePageSize)
		out.Comments = append(cs, out.Comments...)
		out.Labels = append(ls, out.Labels...)
	}
	out.Start = p * agreePageSize
	out.Truncated = len(out.Comments) < n && p > 0
	return out, nil
}

// CommentsBefore reads the 50-aligned page that ends at or after start:
// its comments, and the label events before start, as internal/forge does.
func (f *agreeForge) CommentsBefore(_ context.Context, number int64, start int) (issues.CommentPage, error) {
	if start <= 0 {
		return issues.CommentPage{}, nil
	}
	if err := f.check(number); err != nil {
		return issues.CommentPage{}, err
	}
	end := (start + agreePageSize - 1) / agreePageSize * agreePageSize
	from := end - agreePageSize
	tl := f.s.timeline
	if from >= len(tl) {
		return issues.CommentPage{Start: from}, nil
	}
	cs, ls := page(tl[from:min(end, len(tl))], start-from)
	return issues.CommentPage{Comments: cs, Labels: ls, Start: from}, nil
}

func (f *agreeForge) CreateComment(_ context.Context, number int64, body string) (issues.Comment, error) {
	if err := f.check(number); err != nil {
		return issues.Comment{}, err
	}
	s := f.s
	s.writes++
	s.nextID++
	now := s.clock.now()
	c := issues.Comment{
		ID:        s.nextID,
		Author:    f.user,
		Body:      body,
		HTMLURL:   fmt.Sprintf("http://gitea.test/%s/%s/issues/%d#issuecomment-%d", s.owner, s.repo, number, s.nextID),
		CreatedAt: now,
		UpdatedAt: now,
	}
	s.timeline = append(s.timeline, agreeEntry{comment: &c})
	return c, nil
}

func (f *agreeForge) EditComment(_ context.Context, id int64, body string) (issues.Comment, error) {
	f.s.requests++
	i := f.s.entry(id)
	if i < 0 {
		return issues.Comment{}, fmt.Errorf("comment %d: %w", id, issues.ErrNotFound)
	}
	f.s.writes++
	c := f.s.timeline[i].comment
	c.Body, c.UpdatedAt = body, f.s.clock.now()
	return *c, nil
}

func (f *agreeForge) Comment(_ context.Context, _, id int64) (issues.Comment, error) {
	f.s.requests++
	i := f.s.entry(id)
	if i < 0 || f.s.timeline[i].comment == nil {
		return issues.Comment{}, fmt.Errorf("comment %d: %w", id, issues.ErrNotFound)
	}
	return *f.s.timeline[i].comment, nil
}

// BodyHistory is not kept, as on a private repository.
func (f *agreeForge) BodyHistory(context.Context, int64) ([]issues.Revision, error) {
	f.s.requests++
	return nil, fmt.Errorf("GET content-history: %w", issues.ErrNotFound)
}

// TitleChanges: the scenarios never change the title.
func (f *agreeForge) TitleChanges(context.Context, int64, time.Time) ([]issues.TitleChange, error) {
	f.s.requests++
	return nil, nil
}

func (f *agreeForge) DeleteComment(_ context.Context, id int64) error {
	f.s.requests++
	i := f.s.entry(id)
	if i < 0 {
		return fmt.Errorf("comment %d: %w", id, issues.ErrNotFound)
	}
	f.s.writes++
	f.s.timeline = slices.Delete(f.s.timeline, i, i+1)
	return nil
}

// event records a label change on the timeline.
func (f *agreeForge) event(name string, added bool) {
	f.s.nextID++
	f.s.timeline = append(f.s.timeline, agreeEntry{label: &issues.LabelEvent{Label: name, Added: added, Actor: f.user, At: f.s.clock.now()}})
}

func (f *agreeForge) AddLabels(_ context.Context, number int64, names []string, _ []issues.LabelSpec) error {
	if err := f.check(number); err != nil {
		return err
	}
	is := &f.s.issue
	for _, name := range names {
		if name == "" || slices.ContainsFunc(is.Labels, func(l issues.Label) bool { return l.Name == name }) {
			continue
		}
		f.s.writes++
		is.Labels = append(is.Labels, f.s.label(name))
		f.event(name, true)
	}
	return nil
}

func (f *agreeForge) RemoveLabel(_ context.Context, number int64, label issues.Label) error {
	if err := f.check(number); err != nil {
		return err
	}
	is := &f.s.issue
	i := slices.IndexFunc(is.Labels, func(l issues.Label) bool {
		return label.ID != 0 && l.ID == label.ID || label.ID == 0 && l.Name == label.Name
	})
	if i < 0 {
		return fmt.Errorf("label %q of issue %d: %w", label.Name, number, issues.ErrNotFound)
	}
	f.s.writes++
	name := is.Labels[i].Name
	is.Labels = slices.Delete(is.Labels, i, i+1)
	f.event(name, false)
	return nil
}

// Lock needs a repository admin, which no client of this server is.
func (f *agreeForge) Lock(_ context.Context, number int64, _ string) error {
	if err := f.check(number); err != nil {
		return err
	}
	return fmt.Errorf("PUT lock of issue %d: %w", number, issues.ErrForbidden)
}

func (f *agreeForge) Self(context.Context) (string, error) {
	f.s.requests++
	return f.user, nil
}

func (f *agreeForge) PullFiles(_ context.Context, number int64) ([]string, error) {
	f.s.requests++
	return nil, fmt.Errorf("pull request %d: %w", number, issues.ErrNotFound)
}

func (f *agreeForge) PullFile(_ context.Context, number int64, path string, _ int64) ([]byte, error) {
	f.s.requests++
	return nil, fmt.Errorf("pull request %d, %s: %w", number, path, issues.ErrNotFound)
}

// File serves the default branch's configuration file.
func (f *agreeForge) File(_ context.Context, path string, most int64) ([]byte, error) {
	f.s.requests++
	if path != settings.FileName || f.s.config == nil {
		return nil, fmt.Errorf("GET raw/%s: %w", path, issues.ErrNotFound)
	}
	if int64(len(f.s.config)) > most {
		return nil, fmt.Errorf("%s is over %d bytes: %w", path, most, issues.ErrTooLarge)
	}
	return slices.Clone(f.s.config), nil
}

// IsRepoAdmin needs a repository admin's token, which no client holds.
func (f *agreeForge) IsRepoAdmin(_ context.Context, user string) (bool, error) {
	f.s.requests++
	return false, fmt.Errorf("GET permission of %s: %w", user, issues.ErrForbidden)
}

// Writers are the accounts the scenarios act as.
func (f *agreeForge) Writers(context.Context) ([]string, error) {
	f.s.requests++
	return []string{agreeAgent, seqAgentUser, issues.ActionsUser}, nil
}

func (f *agreeForge) ServerTime() time.Time { return f.s.clock.now() }

func (f *agreeForge) SetAssignees(_ context.Context, number int64, logins []string) error {
	if err := f.check(number); err != nil {
		return err
	}
	f.s.writes++
	f.s.assignees = slices.Clone(logins)
	return nil
}
