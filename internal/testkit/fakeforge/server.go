// Package fakeforge is the one in-memory Gitea of the unit tests: one
// repository with its issues and their timelines, labels, branches of
// files, pull requests, Actions variables and secrets, teams and branch
// protection, behind every role of package port. The real-Gitea suites
// are the integration layer; this is the fast one.
//
// It pages timelines and issue lists as the adapter reads Gitea's
// (forge.PageSize entries a page, at most forge.MaxTailPages read back
// from the last), counts each client's requests as the adapter would send
// them for the common case, keeps every write in order (Writes), and
// fails on demand (Inject: a 409, a 403, an unreachable server, or a
// concurrent writer just before a call).
package fakeforge

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/posture"
)

// URL is the fake server's root, as errors name it.
const URL = "http://gitea.test"

// Server is one repository on a fake Gitea. Its exported fields may be set
// before the first call; the methods are safe for concurrent use.
type Server struct {
	// Now is the server's clock (time.Now when nil).
	Now func() time.Time
	// DefaultBranch is the repository's default branch ("main").
	DefaultBranch string
	// Org says the repository's owner is an organisation.
	Org bool
	// EditHistory says the server shows an issue body's edits (a public
	// repository): FirstEditAfter answers from them.
	EditHistory bool
	// Empty and Archived describe the repository as Repository reads it.
	Empty, Archived bool
	// Workflows are the default branch's workflows, as listed.
	Workflows []port.Workflow
	// Secrets are the names of the Actions secrets.
	Secrets []string
	// Facts are the posture PostureFacts answers (the repository, its
	// owner and default branch filled in).
	Facts posture.Facts

	mu        sync.Mutex
	owner     string
	name      string
	repoID    int64
	nextID    int64
	issues    map[int64]*issue
	labels    []port.RepoLabel
	branches  map[string]map[string][]byte
	heads     map[string]string // branch → its last commit's id
	variables map[string]string
	perms     map[string]string // login → none, read, write, admin or owner
	tokens    map[string]string // token → login
	teams     []*team
	rules     map[string]port.BranchRule
	writes    []Write
	requests  int64
	calls     map[string]int // port method → calls served or failed
	faults    []*Fault
	runs      []Run
}

// issue is an issue or pull request with its timeline.
type issue struct {
	is        issues.Issue
	author    string
	timeline  []entry
	assignees []string
	edits     []time.Time // when the body was edited
	// revisions are the body's edit history, the opening's first; titles
	// the title's changes, as the timeline records them.
	revisions []issues.Revision
	titles    []issues.TitleChange
	head      string // a pull request's branch
	base      string
	files     []string // the paths a pull request changes
}

// entry is one timeline entry: a comment, or a label added or removed.
type entry struct {
	comment *issues.Comment
	label   *issues.LabelEvent
}

type team struct {
	port.Team
	hasRepo bool
	members []string
}

// New makes the repository OWNER/NAME, with a README on main. Its owner
// has the owner's permission; the Actions user writes.
func New(repo string) *Server {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok {
		panic("fakeforge.New: the repository is OWNER/NAME, got " + repo)
	}
	return &Server{
		DefaultBranch: "main",
		owner:         owner,
		name:          name,
		repoID:        1,
		nextID:        1000,
		issues:        map[int64]*issue{},
		branches:      map[string]map[string][]byte{"main": {"README.md": []byte("# " + name + "\n")}},
		variables:     map[string]string{},
		perms:         map[string]string{owner: "owner", issues.ActionsUser: "write"},
		tokens:        map[string]string{},
		rules:         map[string]port.BranchRule{},
		calls:         map[string]int{},
		heads:         map[string]string{},
	}
}

// Repo is OWNER/NAME.
func (s *Server) Repo() string { return s.owner + "/" + s.name }

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Grant gives login a permission on the repository: none, read, write,
// admin or owner. An account not granted reads (a public repository).
func (s *Server) Grant(login, permission string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.perms[login] = permission
}

// Token makes token the token of login: a client connected with it (see
// Dial) acts as login.
func (s *Server) Token(token, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = login
}

// As is a client whose token is login's.
func (s *Server) As(login string) *Client { return &Client{s: s, user: login} }

// Dial is a client with token: the server answers it as the token's
// login, and 401 to every request when it knows no such token.
func (s *Server) Dial(token string) *Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	login, ok := s.tokens[token]
	return &Client{s: s, user: login, rejected: !ok}
}

// Requests counts the requests every client of the server sent.
func (s *Server) Requests() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Calls counts the calls of a port method every client made (AddLabels,
// EditBody, File, ...), failed ones included.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// A Write is one write a client made.
type Write struct {
	// Method is the port method that wrote (EditBody, CreateComment, ...).
	Method string
	// User is the client's login.
	User string
	// Issue is the issue written (0: none); ID the comment, label or team.
	Issue, ID int64
	// Text is what was written: a body, label names, a variable's name
	// and value, a commit's branch and paths.
	Text string
}

// String is the write on one line: method, issue, id, and the start of
// its text.
func (w Write) String() string {
	var b strings.Builder
	b.WriteString(w.Method)
	if w.Issue != 0 {
		fmt.Fprintf(&b, " #%d", w.Issue)
	}
	if w.ID != 0 {
		fmt.Fprintf(&b, " (%d)", w.ID)
	}
	if t := strings.Join(strings.Fields(w.Text), " "); t != "" {
		if len(t) > 80 {
			t = t[:80] + "…"
		}
		b.WriteString(": " + t)
	}
	return b.String()
}

// Writes are the writes made so far, oldest first.
func (s *Server) Writes() []Write {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.writes)
}

// write records a write (the lock held).
func (s *Server) write(c *Client, method string, number, id int64, text string) {
	s.writes = append(s.writes, Write{Method: method, User: c.user, Issue: number, ID: id, Text: text})
}

// A Fault is what the server does to the next calls of a method instead
// of, or before, serving them.
type Fault struct {
	// Method is the port method's name (EditBody, Issue, ...); "" is
	// every method.
	Method string
	// Times is how many calls it takes; 0 is every call from now on.
	Times int
	// Status fails the call with this HTTP status, as the adapter reports
	// it (409 wraps issues.ErrConflict, 403 issues.ErrForbidden, ...).
	Status int
	// Unreachable fails the call as a request that got no answer.
	Unreachable bool
	// Err fails the call with this error.
	Err error
	// Before runs just before the call is served, outside the server's
	// lock: another client's write between the caller's read and its
	// own, say. The call is then served, unless the fault fails it.
	Before func()
}

// forgeMethods are the names a Fault may name.
var forgeMethods = reflect.TypeFor[port.Forge]()

// Inject adds a fault. It panics on a method the port does not have.
func (s *Server) Inject(f Fault) {
	if _, ok := forgeMethods.MethodByName(f.Method); f.Method != "" && !ok {
		panic("fakeforge: no port method " + f.Method)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &f)
}

// Heal removes every fault not yet spent.
func (s *Server) Heal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// take removes and returns the faults that apply to one call of method,
// in the order they were injected (the lock held).
func (s *Server) take(method string) []*Fault {
	var out []*Fault
	s.faults = slices.DeleteFunc(s.faults, func(f *Fault) bool {
		if f.Method != "" && f.Method != method {
			return false
		}
		out = append(out, f)
		if f.Times == 0 {
			return false
		}
		f.Times--
		return f.Times == 0
	})
	return out
}

// failure is the error a fault gives a call, or nil.
func failure(f *Fault, verb, path string) error {
	switch {
	case f.Err != nil:
		return f.Err
	case f.Unreachable:
		return &forge.UnreachableError{URL: URL, Method: verb, Path: "/api/v1" + path, Err: errors.New("connection refused")}
	case f.Status != 0:
		return status(verb, path, f.Status)
	}
	return nil
}

// status is an answer with HTTP status code, as the adapter reports it.
func status(verb, path string, code int) error {
	return &forge.HTTPError{Method: verb, Path: "/api/v1" + path, Status: code}
}

// level orders the permissions.
var level = map[string]int{"none": 0, "read": 1, "write": 2, "admin": 3, "owner": 4}

// permission is login's permission (the lock held).
func (s *Server) permission(login string) string {
	if p, ok := s.perms[login]; ok {
		return p
	}
	return "read"
}

// may says login has at least permission want (the lock held).
func (s *Server) may(login, want string) bool { return level[s.permission(login)] >= level[want] }

func (s *Server) repoPath() string { return "/repos/" + s.owner + "/" + s.name }

func (s *Server) issuePath(n int64) string { return fmt.Sprintf("%s/issues/%d", s.repoPath(), n) }

// AddIssue opens an issue (or a pull request: IsPull) as author, as given:
// a Number of 0 takes the next one; State "" is open; a zero CreatedAt or
// UpdatedAt is now; labels without an id are the repository's of that
// name (created), with one are the repository's label of that id. It
// returns the number.
func (s *Server) AddIssue(is issues.Issue, author string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addIssue(is, author)
}

func (s *Server) addIssue(is issues.Issue, author string) int64 {
	if is.Number == 0 {
		is.Number = 1
		for n := range s.issues {
			is.Number = max(is.Number, n+1)
		}
	}
	is.State = cmp.Or(is.State, "open")
	now := s.now()
	if is.CreatedAt.IsZero() {
		is.CreatedAt = now
	}
	if is.UpdatedAt.IsZero() {
		is.UpdatedAt = now
	}
	is.RepoID, is.RepoOwner = cmp.Or(is.RepoID, s.repoID), cmp.Or(is.RepoOwner, s.owner)
	for i, l := range is.Labels {
		is.Labels[i] = s.label(l)
	}
	s.issues[is.Number] = &issue{is: is, author: author}
	return is.Number
}

// AddPull opens a pull request from branch head into the default branch,
// changing paths (its head's files are the branch's, see Files).
func (s *Server) AddPull(is issues.Issue, author, head string, paths []string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	is.IsPull = true
	n := s.addIssue(is, author)
	s.issues[n].head, s.issues[n].base, s.issues[n].files = head, s.DefaultBranch, paths
	if s.branches[head] == nil {
		s.branches[head] = map[string][]byte{}
	}
	return n
}

// Issue is issue n as the server holds it now, its comment count
// included (the zero Issue when there is none).
func (s *Server) Issue(n int64) issues.Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	if is := s.issues[n]; is != nil {
		return is.view()
	}
	return issues.Issue{}
}

// Change changes issue n in place, as no client's write: a fixture.
func (s *Server) Change(n int64, f func(is *issues.Issue)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.issues[n].is)
}

// Assignees are issue n's assignees.
func (s *Server) Assignees(n int64) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.issues[n].assignees)
}

// AddComment puts a comment at the end of issue n's timeline, as given
// (an ID of 0 takes the next id; a zero CreatedAt or UpdatedAt is now),
// and returns it.
func (s *Server) AddComment(n int64, c issues.Comment) issues.Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.ID == 0 {
		s.nextID++
		c.ID = s.nextID
	}
	s.nextID = max(s.nextID, c.ID)
	now := s.now()
	if c.CreatedAt.IsZero() {
		c.CreatedAt = now
	}
	if c.UpdatedAt.IsZero() {
		c.UpdatedAt = c.CreatedAt
	}
	if c.HTMLURL == "" {
		c.HTMLURL = fmt.Sprintf("%s/%s/issues/%d#issuecomment-%d", URL, s.Repo(), n, c.ID)
	}
	is := s.issues[n]
	is.timeline = append(is.timeline, entry{comment: &c})
	return c
}

// SetCommentBody replaces comment id's body in place, as no client's
// write: a fixture (an edit an agent made before the test, say).
func (s *Server) SetCommentBody(id int64, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, i := s.comment(id)
	is.timeline[i].comment.Body = body
}

// RemoveComment takes comment id off its timeline, as no client's write.
func (s *Server) RemoveComment(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, i := s.comment(id)
	is.timeline = slices.Delete(is.timeline, i, i+1)
}

// AddLabelEvent puts a label event at the end of issue n's timeline.
func (s *Server) AddLabelEvent(n int64, e issues.LabelEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	if e.At.IsZero() {
		e.At = s.now()
	}
	s.issues[n].timeline = append(s.issues[n].timeline, entry{label: &e})
}

// Comments are issue n's comments, oldest first.
func (s *Server) Comments(n int64) []issues.Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []issues.Comment
	for _, e := range s.issues[n].timeline {
		if e.comment != nil {
			out = append(out, *e.comment)
		}
	}
	return out
}

// Files is branch's files, path to content ("" is the default branch),
// made when missing: a fixture changes it in place.
func (s *Server) Files(branch string) map[string][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	branch = cmp.Or(branch, s.DefaultBranch)
	if s.branches[branch] == nil {
		s.branches[branch] = map[string][]byte{}
	}
	return s.branches[branch]
}

// Branches are the names of the repository's branches, sorted.
func (s *Server) Branches() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for b := range s.branches {
		out = append(out, b)
	}
	slices.Sort(out)
	return out
}

// Head is the id of the last commit CommitFiles made on branch ("" for
// none).
func (s *Server) Head(branch string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.heads[branch]
}

// DropBranches leaves the repository without a branch (an empty one).
func (s *Server) DropBranches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.branches = map[string]map[string][]byte{}
}

// Variables are the repository's Actions variables: a fixture changes
// them in place.
func (s *Server) Variables() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.variables
}

// AddLabel adds a label to the repository (an ID of 0 takes the next
// id) and returns it.
func (s *Server) AddLabel(l port.RepoLabel) port.RepoLabel {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.ID == 0 {
		s.nextID++
		l.ID = s.nextID
	}
	s.nextID = max(s.nextID, l.ID)
	s.labels = append(s.labels, l)
	return l
}

// Labels are the repository's labels.
func (s *Server) Labels() []port.RepoLabel {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.labels)
}

// label is the repository's label l names (by id when it has one, else by
// name), created when missing (the lock held).
func (s *Server) label(l issues.Label) issues.Label {
	for _, r := range s.labels {
		if l.ID != 0 && r.ID == l.ID || l.ID == 0 && r.Name == l.Name {
			return issues.Label{ID: r.ID, Name: r.Name}
		}
	}
	if l.ID == 0 {
		s.nextID++
		l.ID = s.nextID
	}
	s.nextID = max(s.nextID, l.ID)
	s.labels = append(s.labels, port.RepoLabel{ID: l.ID, Name: l.Name, Color: forge.DefaultLabelColor})
	return l
}

// AddTeam adds a team of the organisation (an ID of 0 takes the next
// id), with access to the repository when hasRepo, and its members.
func (s *Server) AddTeam(t port.Team, hasRepo bool, members ...string) port.Team {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.ID == 0 {
		s.nextID++
		t.ID = s.nextID
	}
	s.teams = append(s.teams, &team{Team: t, hasRepo: hasRepo, members: members})
	return t
}

// RemoveTeamMember takes login out of team id, as an owner does on the
// server: its access through the team ends.
func (s *Server) RemoveTeamMember(id int64, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.teams {
		if t.ID == id {
			t.members = slices.DeleteFunc(t.members, func(m string) bool { return m == login })
		}
	}
}

// Protect sets the branch protection rule r.
func (s *Server) Protect(r port.BranchRule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules[r.Name] = r
}

// Rule is the protection rule name, and false when there is none.
func (s *Server) Rule(name string) (port.BranchRule, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rules[name]
	return r, ok
}

// OpenPulls are the open pull requests, oldest first.
func (s *Server) OpenPulls() []port.Pull {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []port.Pull
	for _, n := range s.numbers() {
		if is := s.issues[n]; is.is.IsPull && is.is.State == "open" {
			out = append(out, is.pull(s))
		}
	}
	return out
}

// Merge merges pull request n: its branch's files land on its base, and
// it is closed.
func (s *Server) Merge(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.issues[n]
	for p, data := range s.branches[is.head] {
		s.branches[is.base][p] = data
	}
	is.is.State = "closed"
}

// numbers are the issues' numbers, ascending (the lock held).
func (s *Server) numbers() []int64 {
	var out []int64
	for n := range s.issues {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// view is the issue as read: labels copied, the comment count counted.
func (is *issue) view() issues.Issue {
	out := is.is
	out.Labels = slices.Clone(out.Labels)
	out.Comments = 0
	for _, e := range is.timeline {
		if e.comment != nil {
			out.Comments++
		}
	}
	return out
}

func (is *issue) pull(s *Server) port.Pull {
	return port.Pull{Number: is.is.Number, Title: is.is.Title, Head: is.head, Base: is.base,
		HTMLURL: fmt.Sprintf("%s/%s/pulls/%d", URL, s.Repo(), is.is.Number)}
}

// comment finds comment id: its issue and its index in the timeline.
func (s *Server) comment(id int64) (*issue, int) {
	for _, is := range s.issues {
		for i, e := range is.timeline {
			if e.comment != nil && e.comment.ID == id {
				return is, i
			}
		}
	}
	return nil, -1
}

// notFound is a 404 answer.
func notFound(verb, path string) error { return status(verb, path, http.StatusNotFound) }
