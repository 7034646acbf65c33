package actiontest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

var userSeq atomic.Int64

// Collaborator creates a user whose login starts with prefix (made unique
// on the server), gives them perm on owner/repo and returns their login and
// a token. The guard needs a token whose user is not the one causing the
// events (CreateIssue acts as the administrator): with a personal token, the
// guard skips events its own user caused, so that it never loops.
func Collaborator(t testing.TB, s *giteatest.Server, owner, repo, prefix string, perm giteatest.Permission) (login, token string) {
	t.Helper()
	ctx := context.Background()
	login = fmt.Sprintf("%s-%d", prefix, userSeq.Add(1))
	token, err := s.NewUser(ctx, login, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddCollaborator(ctx, owner, repo, login, perm); err != nil {
		t.Fatal(err)
	}
	return login, token
}
