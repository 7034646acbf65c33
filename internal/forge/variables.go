package forge

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// Variable is false when absent; only the owner's or a site admin's token
// reads it (else issues.ErrForbidden).
func (c *Client) Variable(ctx context.Context, name string) (string, bool, error) {
	sc, err := c.sdk(ctx)
	if err != nil {
		return "", false, err
	}
	v, resp, err := sc.GetRepoActionVariable(c.owner, c.repo, name)
	if err := c.sdkError(ctx, http.MethodGet, c.variablePath(name), resp, err); err != nil {
		if errors.Is(err, issues.ErrNotFound) {
			return "", false, nil
		}
		return "", false, err
	}
	return v.Value, true, nil
}

// SetVariable creates when !exists, updating if it does exist.
func (c *Client) SetVariable(ctx context.Context, name, value string, exists bool) error {
	sc, err := c.sdk(ctx)
	if err != nil {
		return err
	}
	if !exists {
		resp, err := sc.CreateRepoActionVariable(c.owner, c.repo, name, value)
		if resp == nil || resp.StatusCode != http.StatusConflict {
			return c.sdkError(ctx, http.MethodPost, c.variablePath(name), resp, err)
		}
	}
	resp, err := sc.UpdateRepoActionVariable(c.owner, c.repo, name, value)
	return c.sdkError(ctx, http.MethodPut, c.variablePath(name), resp, err)
}

func (c *Client) variablePath(name string) string {
	return c.repoPath() + "/actions/variables/" + url.PathEscape(name)
}
