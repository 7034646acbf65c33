package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/gns-guard/gns-guard/internal/guard"
)

// ErrTooManySince says a read of the comments updated since a time was
// cut off at the client's cap: too many, or too large, to read in one
// answer. The caller reads the timeline instead.
var ErrTooManySince = errors.New("forge: the comments updated since that time are more than one answer holds")

// CommentsSince returns the issue's comments updated at or after since
// (Gitea compares whole seconds), oldest first, in one request: Gitea's
// comment list filters by updated_at and answers them all at once. A
// comment over guard.MaxCommentBytes comes without its body (TooLarge); an
// answer over the client's cap is ErrTooManySince.
func (c *Client) CommentsSince(ctx context.Context, number int64, since time.Time) ([]guard.Comment, error) {
	q := url.Values{"since": {since.UTC().Format(time.RFC3339)}}
	res, shown, err := c.getCapped(ctx, c.issuePath(number)+"/comments?"+q.Encode(), guard.MaxCommentBytes)
	if err != nil {
		return nil, err
	}
	if res.Cut != nil {
		return nil, ErrTooManySince
	}
	var list []*timelineEntry // the same fields as a timeline comment
	if err := json.Unmarshal(res.JSON, &list); err != nil {
		return nil, fmt.Errorf("GET %s: decoding the answer: %w", shown, err)
	}
	var out []guard.Comment
	for i, e := range list {
		if e == nil {
			continue
		}
		cm := e.comment()
		if n, long := res.Long[strconv.Itoa(i)+"/body"]; long {
			cm.Body, cm.TooLarge, cm.BodyBytes = "", true, n
		}
		out = append(out, cm)
	}
	slices.SortFunc(out, func(a, b guard.Comment) int { return compareInt(a.ID, b.ID) })
	return out, nil
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Variable reads the repository's Actions variable name: its value, and
// false when there is none. Reading variables needs the repository
// owner's token (or a site admin's); others get an error wrapping
// guard.ErrForbidden.
func (c *Client) Variable(ctx context.Context, name string) (string, bool, error) {
	sc, err := c.sdk(ctx)
	if err != nil {
		return "", false, err
	}
	v, resp, err := sc.GetRepoActionVariable(c.owner, c.repo, name)
	if err := c.sdkError(ctx, http.MethodGet, c.variablePath(name), resp, err); err != nil {
		if errors.Is(err, guard.ErrNotFound) {
			return "", false, nil
		}
		return "", false, err
	}
	return v.Value, true, nil
}

// SetVariable writes the repository's Actions variable name, creating it
// when exists is false (and updating it when it turns out to exist).
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
