package meter

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// repository is the repository an agent's address names, as Gitea
// answers it. Its id keys the budget in the store: the name in another
// letter case, or after a rename or a transfer, is the same repository
// and spends the same budget. Its name is the one the receipts and the
// guard's reading use.
type repository struct {
	id   int64
	name string
}

// key is the repository's key in the store.
func (r repository) key() string { return RepoKey(r.id) }

// RepoKey is the store's key of the repository whose id on the Gitea
// server is id: "id:" and the number.
func RepoKey(id int64) string { return "id:" + strconv.FormatInt(id, 10) }

// repoName is the exchange's repository as Gitea names it, or as the
// address spells it before Gitea answered.
func (x *exchange) repoName() string {
	if x.repo.name != "" {
		return x.repo.name
	}
	return x.route.Repo()
}

// repositoryOf asks Gitea, with client c of the agent's token, which
// repository owner/name is: one request, kept IssueTTL by the name in
// lower case (Gitea's names ignore letter case).
func (m *Meter) repositoryOf(ctx context.Context, c Client, owner, name string) (repository, error) {
	return m.repos.get(strings.ToLower(owner+"/"+name), func() (repository, error) {
		r, err := c.Repository(ctx)
		switch {
		case err != nil:
			return repository{}, err
		case r.ID <= 0 || r.FullName == "":
			return repository{}, fmt.Errorf("gitea answered repository %s/%s without its id or name", owner, name)
		}
		return repository{id: r.ID, name: r.FullName}, nil
	})
}
