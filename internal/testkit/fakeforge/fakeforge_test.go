package fakeforge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/secrets"
)

var ctx = context.Background()

// withComments is issue 7 with n comments and a label event after each
// tenth.
func withComments(n int) *Server {
	s := New("org/proj")
	s.AddIssue(issues.Issue{Number: 7, Body: "body"}, "alice")
	for i := range n {
		s.AddComment(7, issues.Comment{Author: "alice", Body: fmt.Sprintf("c%d", i)})
		if i%10 == 9 {
			s.AddLabelEvent(7, issues.LabelEvent{Label: "size::small", Added: true, Actor: "bob"})
		}
	}
	return s
}

// The tail is read back a page at a time, as the adapter pages Gitea's
// timeline, and a page budget cuts a long search short.
func TestRecentCommentsPagesTheTimeline(t *testing.T) {
	s := withComments(130) // 143 entries: pages of 50, 50, 43
	c := s.As("alice")
	is, _ := c.Issue(ctx, 7)
	page, err := c.RecentComments(ctx, is, 3)
	if err != nil || page.Start != 2*forge.PageSize || len(page.Comments) != 130-91 || c.Requests() != 2 {
		t.Errorf("3 comments: start %d, %d comments, %d requests, %v", page.Start, len(page.Comments), c.Requests(), err)
	}
	long := withComments(4*forge.PageSize + 100)
	c = long.As("alice")
	page, _ = c.RecentComments(ctx, long.Issue(7), 1000)
	if !page.Truncated || c.Requests() != forge.MaxTailPages || len(page.Labels) == 0 {
		t.Errorf("truncated %v after %d requests, %d label events", page.Truncated, c.Requests(), len(page.Labels))
	}
	before, _ := c.CommentsBefore(ctx, 7, page.Start)
	if before.Start != page.Start-forge.PageSize || len(before.Comments) == 0 {
		t.Errorf("the page before %d starts at %d with %d comments", page.Start, before.Start, len(before.Comments))
	}
}

// A concurrent edit between a read and the write makes the write a 409;
// the writes are kept in order.
func TestEditBodyConflictsAfterAConcurrentEdit(t *testing.T) {
	s := withComments(0)
	guard, agent := s.As(issues.ActionsUser), s.As("agent")
	s.Grant("agent", "write")
	is, _ := guard.Issue(ctx, 7)
	s.Inject(Fault{Method: "EditBody", Times: 1, Before: func() {
		if _, err := agent.EditBody(ctx, 7, "theirs", is.ContentVersion); err != nil {
			t.Error(err)
		}
	}})
	_, err := guard.EditBody(ctx, 7, "ours", is.ContentVersion)
	if !errors.Is(err, issues.ErrConflict) {
		t.Fatalf("got %v, want a conflict", err)
	}
	again, _ := guard.Issue(ctx, 7)
	if v, err := guard.EditBody(ctx, 7, "ours", again.ContentVersion); err != nil || v != 2 {
		t.Errorf("the write after a re-read: version %d, %v", v, err)
	}
	w := s.Writes()
	if len(w) != 2 || w[0].User != "agent" || w[1].Text != "ours" {
		t.Errorf("writes %v", w)
	}
}

// Rights are Gitea's: only an admin locks, reads permissions and
// variables; a fault fails any call; a held secret is never written.
func TestRefusals(t *testing.T) {
	s := withComments(0)
	c := s.As(issues.ActionsUser)
	if err := c.Lock(ctx, 7, "too heated"); !errors.Is(err, issues.ErrForbidden) {
		t.Errorf("lock: %v", err)
	}
	if _, _, err := c.Variable(ctx, "X"); !errors.Is(err, issues.ErrForbidden) {
		t.Errorf("variable: %v", err)
	}
	if ok, err := s.As("org").IsRepoAdmin(ctx, "org"); !ok || err != nil {
		t.Errorf("the owner: %v %v", ok, err)
	}
	s.Inject(Fault{Unreachable: true, Times: 1})
	if _, err := c.Issue(ctx, 7); !errors.Is(err, issues.ErrUnreachable) {
		t.Errorf("unreachable: %v", err)
	}
	c.HoldSecrets(secrets.Secret{Name: "the token", Value: "s3cret-token-value"})
	if _, err := c.CreateComment(ctx, 7, "leak s3cret-token-value"); err == nil || len(s.Writes()) != 0 {
		t.Errorf("a comment with a held secret: %v, writes %v", err, s.Writes())
	}
	if _, err := s.Dial("no such token").Self(ctx); !errors.Is(err, issues.ErrUnauthorized) {
		t.Errorf("an unknown token: %v", err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "EditBdy") {
			t.Errorf("a fault on a method the port lacks: %v", r)
		}
	}()
	s.Inject(Fault{Method: "EditBdy"})
}

// Writers answers as Gitea's assignees: write collaborators; in an
// organisation, the members of a team of the repository with a unit at
// write (Issues write and Code read, say) or Pull requests at read, not
// those of a read-only team, nor a team without the repository, nor the
// organisation; a user owner last. A removed member is no longer listed.
func TestWritersAreGiteasAssignees(t *testing.T) {
	s := New("acme/api")
	s.Org = true
	s.Grant("collab", "write")
	s.Grant("viewer", "read")
	agents := s.AddTeam(port.Team{Name: "agents", Units: map[string]string{"repo.issues": "write", "repo.code": "read"}}, true, "agent1", "agent2")
	s.AddTeam(port.Team{Name: "readers", Units: map[string]string{"repo.issues": "read", "repo.code": "read"}}, true, "reader1")
	s.AddTeam(port.Team{Name: "reviewers", Units: map[string]string{"repo.pulls": "read"}}, true, "reviewer")
	s.AddTeam(port.Team{Name: "elsewhere", Units: map[string]string{"repo.issues": "write"}}, false, "stranger")
	got, err := s.As("reader1").Writers(ctx)
	want := []string{"agent1", "agent2", "collab", issues.ActionsUser, "reviewer"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("an organisation's writers: %v, %v; want %v", got, err, want)
	}
	s.RemoveTeamMember(agents.ID, "agent1")
	if got, _ := s.As("agent2").Writers(ctx); slices.Contains(got, "agent1") {
		t.Errorf("a removed member is still listed: %v", got)
	}
	user := New("alice/app")
	user.Grant("bob", "write")
	if got, _ := user.As("bob").Writers(ctx); !slices.Equal(got, []string{"bob", issues.ActionsUser, "alice"}) {
		t.Errorf("a user's repository's writers: %v", got)
	}
}
