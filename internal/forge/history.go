package forge

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// Gitea keeps an issue body's edits (models/issues/content_history.go: up
// to 20 revisions) on a web route, GET
// /{owner}/{repo}/issues/{n}/content-history/list. It takes no API token
// and answers anyone who may read a public repository. The API has no such
// endpoint.

// historyTime is a revision's time in the list's HTML.
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

// maxRevisions bounds the revisions BodyHistory reads: Gitea keeps 20.
const maxRevisions = 25

// historyEntry: editor in <strong>, time in datetime, and id.
type historyEntry struct {
	Name  string `json:"name"`
	Value int64  `json:"value"`
}

var (
	historyEditor  = regexp.MustCompile(`<strong>([^<]*)</strong>`)
	historyDeleted = regexp.MustCompile(`data-history-is-deleted="1"`)
	// diffDeleted is the removed text in a revision's diff.
	diffDeleted = regexp.MustCompile(`(?s)<span class='gd'>.*?</span>`)
	diffTags    = regexp.MustCompile(`<[^>]*>`)
)

// BodyHistory reads the body's edit history from Gitea's web routes
// (routers/web/repo/issue_content_history.go: the list, then each
// revision's diff against the one before, whose inserted and unchanged
// text is the revision's). Sent without the token, as FirstEditAfter:
// a private repository answers 404.
func (c *Client) BodyHistory(ctx context.Context, number int64) ([]issues.Revision, error) {
	base := c.base + "/" + url.PathEscape(c.owner) + "/" + url.PathEscape(c.repo) + "/issues/" + strconv.FormatInt(number, 10) + "/content-history/"
	var list struct {
		Results []historyEntry `json:"results"`
	}
	if err := c.getWeb(ctx, base+"list", &list); err != nil {
		return nil, err
	}
	// Gitea orders the list by the edit's second alone: revisions saved in
	// the same second (an agent's edit right after the guard's write) come
	// in the order the rows were stored. Their ids say which is newer.
	slices.SortStableFunc(list.Results, func(a, b historyEntry) int { return cmp.Compare(b.Value, a.Value) })
	var out []issues.Revision
	for i, e := range list.Results {
		if i == maxRevisions {
			break
		}
		r := issues.Revision{Deleted: historyDeleted.MatchString(e.Name)}
		if m := historyEditor.FindStringSubmatch(e.Name); m != nil {
			r.Editor = html.UnescapeString(m[1])
		}
		if m := historyTime.FindStringSubmatch(e.Name); m != nil {
			r.At, _ = time.Parse(time.RFC3339, m[1])
		}
		if !r.Deleted {
			var d struct {
				DiffHTML string `json:"diffHtml"`
			}
			if err := c.getWeb(ctx, base+"detail?history_id="+strconv.FormatInt(e.Value, 10), &d); err != nil {
				return nil, err
			}
			r.Text = html.UnescapeString(diffTags.ReplaceAllString(diffDeleted.ReplaceAllString(d.DiffHTML, ""), ""))
		}
		out = append(out, r)
	}
	slices.Reverse(out) // the list is newest first
	return out, nil
}

// getWeb GETs without the token, at most maxHistoryAnswer; 404 and 403 wrap
// issues.ErrNotFound and ErrForbidden.
func (c *Client) getWeb(ctx context.Context, u string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w: %v", u, issues.ErrUnreachable, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxHistoryAnswer+1))
	switch {
	case err != nil:
		return fmt.Errorf("GET %s: %w: %v", u, issues.ErrUnreachable, err)
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("GET %s: %w", u, issues.ErrNotFound)
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("GET %s: %w", u, issues.ErrForbidden)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	case len(data) > maxHistoryAnswer:
		return fmt.Errorf("GET %s: %w", u, issues.ErrTooLarge)
	}
	return json.Unmarshal(data, out)
}

// maxTitlePages is small: titles change seldom.
const maxTitlePages = 10

// TitleChanges filters by updated_at (change_title entries never update);
// oldest first.
func (c *Client) TitleChanges(ctx context.Context, number int64, since time.Time) ([]issues.TitleChange, error) {
	var out []issues.TitleChange
	for page := 1; page <= maxTitlePages; page++ {
		q := url.Values{"since": {since.UTC().Format(time.RFC3339)}, "page": {strconv.Itoa(page)}, "limit": {strconv.Itoa(PageSize)}}
		res, shown, err := c.getCapped(ctx, c.issuePath(number)+"/timeline?"+q.Encode(), issues.MaxCommentBytes)
		if err != nil {
			return nil, err
		}
		var entries []struct {
			Type     string `json:"type"`
			OldTitle string `json:"old_title"`
			NewTitle string `json:"new_title"`
			User     *struct {
				Login string `json:"login"`
			} `json:"user"`
			Created time.Time `json:"created_at"`
		}
		if err := json.Unmarshal(res.JSON, &entries); err != nil {
			return nil, fmt.Errorf("GET %s: decoding the answer: %w", shown, err)
		}
		for _, e := range entries {
			if e.Type != "change_title" {
				continue
			}
			tc := issues.TitleChange{Old: e.OldTitle, New: e.NewTitle, At: e.Created}
			if e.User != nil {
				tc.Actor = e.User.Login
			}
			out = append(out, tc)
		}
		if len(entries) < PageSize && res.Cut == nil {
			return out, nil
		}
	}
	return out, fmt.Errorf("forge: the title changes of #%d: more than %d pages of timeline: %w", number, maxTitlePages, issues.ErrTooLarge)
}
