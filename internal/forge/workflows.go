package forge

import (
	"context"
	"net/http"
)

// Workflow is a workflow file of the repository's default branch as
// GET /repos/{owner}/{repo}/actions/workflows lists it (Gitea 1.26,
// routers/api/v1/repo/action.go; it needs Actions read).
type Workflow struct {
	// ID is the file's name, Path its path (.gitea/workflows/x.yml).
	ID   string `json:"id"`
	Name string `json:"name"`
	Path string `json:"path"`
	// State is "active", or "disabled_manually" for a workflow a user
	// with Actions write disabled: it starts no run for issue and comment
	// events.
	State string `json:"state"`
}

// Workflows lists the workflows of the repository's default branch: one
// request.
func (c *Client) Workflows(ctx context.Context) ([]Workflow, error) {
	var out struct {
		Workflows []Workflow `json:"workflows"`
	}
	if err := c.do(ctx, http.MethodGet, c.repoPath()+"/actions/workflows", nil, &out); err != nil {
		return nil, err
	}
	return out.Workflows, nil
}
