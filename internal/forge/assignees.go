package forge

import (
	"context"
	"net/http"
)

// SetAssignees replaces the issue's assignees with logins (none: clears
// them) in one PATCH. Gitea refuses a login that is not a user who can be
// assigned (HTTP 422); the agents' exit protocol (`gns-guard report`)
// hands over with it.
func (c *Client) SetAssignees(ctx context.Context, number int64, logins []string) error {
	if logins == nil {
		logins = []string{}
	}
	in := struct {
		Assignees []string `json:"assignees"`
	}{logins}
	return c.do(ctx, http.MethodPatch, c.issuePath(number), in, nil)
}

// Writers lists the logins that can write the repository's issues: Gitea's
// assignees of the repository (models/repo/user_repo.go, GetRepoAssignees:
// the accounts with write access, by collaboration or team, and a user
// owner), which any reader of the repository may list. One request; the
// list is not paged.
func (c *Client) Writers(ctx context.Context) ([]string, error) {
	var us []apiUser
	if err := c.do(ctx, http.MethodGet, c.repoPath()+"/assignees", nil, &us); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(us))
	for _, u := range us {
		out = append(out, u.Login)
	}
	return out, nil
}
