package forge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// ErrTooManySince: the since-read hit the cap; the caller reads the timeline
// instead.
var ErrTooManySince = errors.New("forge: the comments updated since that time are more than one answer holds")

// CommentsSince returns the issue's comments updated at or after since
// (Gitea compares whole seconds), oldest first, in one request: Gitea's
// comment list filters by updated_at and answers them all at once. A
// comment over issues.MaxCommentBytes comes without its body (TooLarge); an
// answer over the client's cap is ErrTooManySince.
func (c *Client) CommentsSince(ctx context.Context, number int64, since time.Time) ([]issues.Comment, error) {
	q := url.Values{"since": {since.UTC().Format(time.RFC3339)}}
	res, shown, err := c.getCapped(ctx, c.issuePath(number)+"/comments?"+q.Encode(), issues.MaxCommentBytes)
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
	var out []issues.Comment
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
	slices.SortFunc(out, func(a, b issues.Comment) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}
