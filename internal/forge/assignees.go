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
