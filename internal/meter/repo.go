package meter

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// repository is the one an agent's address names, as Gitea answers it.
// Its id keys the budget, so any spelling, rename or transfer spends one
// budget; receipts and the guard use its name.
type repository struct {
	id   int64
	name string
}

// key is the repository's key in the store.
func (r repository) key() string { return RepoKey(r.id) }

// RepoKey is the store's key of Gitea repository id: "id:" and the number.
func RepoKey(id int64) string { return "id:" + strconv.FormatInt(id, 10) }

// repoName is Gitea's name of the repository, or the address's until
// Gitea answers.
func (x *exchange) repoName() string {
	if x.repo.name != "" {
		return x.repo.name
	}
	return x.route.Repo()
}

// repositoryOf asks Gitea which repository owner/name is; kept IssueTTL
// by the lower-cased name, as Gitea ignores case.
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
