package forge

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"time"
)

// Gitea keeps an issue body's edits (models/issues/content_history.go: up
// to 20 revisions, the first and the last never thinned out) and shows
// them on a web route, GET /{owner}/{repo}/issues/{n}/content-history/list,
// which takes no API token: it answers anyone who may read the repository
// without signing in (a public repository), one request, with each
// revision's time in the HTML of its entry. The API has no such endpoint.

// historyTime is the time of a revision in the list's HTML.
var historyTime = regexp.MustCompile(`datetime="([^"]+)"`)

// maxHistoryAnswer bounds the list's answer: 20 short entries.
const maxHistoryAnswer = 1 << 20

// FirstEditAfter is the time of the body's first revision after t, from
// its edit history: ok is false when the history cannot be read (a
// private repository, a server that does not keep it) or holds none after
// t. One request, sent without the token.
func (c *Client) FirstEditAfter(ctx context.Context, number int64, t time.Time) (time.Time, bool) {
	u := c.base + "/" + url.PathEscape(c.owner) + "/" + url.PathEscape(c.repo) + "/issues/" + strconv.FormatInt(number, 10) + "/content-history/list"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return time.Time{}, false
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		return time.Time{}, false
	}
	defer resp.Body.Close()
	var list struct {
		Results []struct {
			Name string `json:"name"`
		} `json:"results"`
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxHistoryAnswer))
	if err != nil || resp.StatusCode != http.StatusOK || json.Unmarshal(data, &list) != nil {
		return time.Time{}, false
	}
	var first time.Time
	for _, r := range list.Results {
		m := historyTime.FindStringSubmatch(r.Name)
		if m == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339, m[1])
		if err == nil && at.After(t) && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first, !first.IsZero()
}
