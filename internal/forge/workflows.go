package forge

import (
	"context"
	"net/http"

	"github.com/gns-guard/gns-guard/internal/port"
)

// Workflows lists the default branch's workflows: one request.
func (c *Client) Workflows(ctx context.Context) ([]port.Workflow, error) {
	var out struct {
		Workflows []port.Workflow `json:"workflows"`
	}
	if err := c.do(ctx, http.MethodGet, c.repoPath()+"/actions/workflows", nil, &out); err != nil {
		return nil, err
	}
	return out.Workflows, nil
}
