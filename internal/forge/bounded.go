package forge

// Bounded, never blind (docs/choices.md#reading-the-issue): anyone who may
// write to an issue chooses its texts, and Gitea limits none. Escaped in
// JSON, 6 MiB of '<' make a 36 MiB answer, over MaxAnswer. So the issue and
// its timeline are read streamed, and what lies past a cut is read around.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/jsoncap"
)

// MaxSplitRequests bounds the requests one client spends reading around
// entries too large to read. One entry costs its cut page and up to six
// small pages; sixty allow several, and bound the worst case to sixty
// answers of MaxAnswer each.
const MaxSplitRequests = 60

// isCut reports whether err is the client's answer cap.
func isCut(err error) bool {
	var tl *TooLargeError
	return errors.As(err, &tl)
}

// getCapped sends GET /api/v1+path and copies its JSON answer, strings
// over limit bytes left out. An answer over the client's cap is not an
// error: the copy holds what came before the cut, and says so (Cut).
func (c *Client) getCapped(ctx context.Context, path string, limit int64) (*jsoncap.Result, string, error) {
	res, _, shown, err := c.getCappedHeader(ctx, path, limit)
	return res, shown, err
}

// getCappedHeader is getCapped that also returns the answer's header.
func (c *Client) getCappedHeader(ctx context.Context, path string, limit int64) (*jsoncap.Result, http.Header, string, error) {
	resp, shown, err := c.send(context.WithValue(ctx, streamedKey{}, true), http.MethodGet, path, nil)
	if err != nil {
		return nil, nil, shown, err
	}
	defer resp.Body.Close()
	res, err := jsoncap.Copy(resp.Body, limit, isCut)
	if err != nil {
		return nil, nil, shown, c.readError(ctx, http.MethodGet, shown, err)
	}
	return res, resp.Header, shown, nil
}

// readIssue drops a body over issues.MaxBodyBytes: one request, three past
// the cap.
func (c *Client) readIssue(ctx context.Context, number int64) (issues.Issue, error) {
	res, shown, err := c.getCapped(ctx, c.issuePath(number), issues.MaxBodyBytes)
	if err != nil {
		return issues.Issue{}, err
	}
	var a apiIssue
	if err := json.Unmarshal(res.JSON, &a); err != nil {
		return issues.Issue{}, fmt.Errorf("GET %s: decoding the answer: %w", shown, err)
	}
	is := a.toGuard()
	if n, long := res.Long["body"]; long || (res.Cut != nil && !res.Whole["body"]) {
		is.Body, is.BodyTooLarge, is.BodyBytes = "", true, n
	}
	if res.Cut == nil {
		return is, nil
	}
	// Cut off: Gitea writes the body first; ask for the rest apart.
	is.Number = number
	if !res.Whole["labels"] {
		var labels []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		}
		if err := c.do(ctx, http.MethodGet, c.issuePath(number)+"/labels", nil, &labels); err != nil {
			return issues.Issue{}, err
		}
		is.Labels = is.Labels[:0]
		for _, l := range labels {
			is.Labels = append(is.Labels, issues.Label{ID: l.ID, Name: l.Name})
		}
	}
	if !res.Whole["repository"] {
		var repo struct {
			ID    int64 `json:"id"`
			Owner *struct {
				Login string `json:"login"`
			} `json:"owner"`
		}
		if err := c.do(ctx, http.MethodGet, c.repoPath(), nil, &repo); err != nil {
			return issues.Issue{}, err
		}
		is.RepoID = repo.ID
		if repo.Owner != nil {
			is.RepoOwner = repo.Owner.Login
		}
	}
	if !res.Whole["content_version"] {
		is.NoCAS, is.ContentVersion = true, 0
	}
	return is, nil
}

// Comment drops a body over issues.MaxCommentBytes: one request. Another
// issue's comment is not found.
func (c *Client) Comment(ctx context.Context, number, id int64) (issues.Comment, error) {
	path := c.commentPath(id)
	res, shown, err := c.getCapped(ctx, path, issues.MaxCommentBytes)
	if err != nil {
		return issues.Comment{}, err
	}
	var e struct {
		timelineEntry
		IssueURL string `json:"issue_url"`
	}
	if err := json.Unmarshal(res.JSON, &e); err != nil {
		return issues.Comment{}, fmt.Errorf("GET %s: decoding the answer: %w", shown, err)
	}
	if !strings.HasSuffix(e.IssueURL, "/issues/"+strconv.FormatInt(number, 10)) {
		return issues.Comment{}, fmt.Errorf("GET %s: comment %d is not issue #%d's: %w", shown, id, number, issues.ErrNotFound)
	}
	cm := e.comment()
	if n, long := res.Long["body"]; long || (res.Cut != nil && !res.Whole["body"]) {
		cm.Body, cm.TooLarge, cm.BodyBytes = "", true, max(n, issues.MaxCommentBytes+1)
	}
	return cm, nil
}

// rowEntry is a timeline entry, or a stretch given up.
type rowEntry struct {
	*timelineEntry
	// row is a minimum offset: Gitea may drop earlier entries from the page.
	row int
	// tooLarge: over issues.MaxCommentBytes or cut; bodyBytes is a minimum.
	tooLarge  bool
	bodyBytes int64
	// partial says the answer was cut inside this entry.
	partial bool
	// unread, when not 0, counts rows given up instead.
	unread int
}

func unreadRows(row, n int) rowEntry {
	return rowEntry{timelineEntry: &timelineEntry{}, row: row, unread: n}
}

// rows is how many timeline rows entries stand for.
func rows(entries []rowEntry) int {
	n := 0
	for _, e := range entries {
		n += max(e.unread, 1)
	}
	return n
}

// comment converts an entry, too large or not, or a stretch.
func (e rowEntry) comment() issues.Comment {
	if e.unread > 0 {
		return issues.Comment{TooLarge: true, Unread: e.unread}
	}
	c := e.timelineEntry.comment()
	if e.tooLarge {
		c.Body, c.TooLarge, c.BodyBytes = "", true, max(e.bodyBytes, int64(len(e.Body)))
	}
	return c
}

// isComment includes a stretch that may hold comments.
func (e rowEntry) isComment() bool { return e.unread > 0 || e.Type == typeComment }

// readWindow reads timeline rows [offset, offset+limit) in one request
// (offset a multiple of limit). cut says the answer was cut off at the
// client's cap: the entries are those read whole and, marked partial,
// the one it was cut in.
func (c *Client) readWindow(ctx context.Context, number int64, offset, limit int) (entries []rowEntry, cut bool, err error) {
	q := url.Values{"page": {strconv.Itoa(offset/limit + 1)}, "limit": {strconv.Itoa(limit)}}
	res, shown, err := c.getCapped(ctx, c.issuePath(number)+"/timeline?"+q.Encode(), issues.MaxCommentBytes)
	if err != nil {
		return nil, false, err
	}
	var list []*timelineEntry // Gitea answers null for an empty page
	if err := json.Unmarshal(res.JSON, &list); err != nil {
		return nil, false, fmt.Errorf("GET %s: decoding the answer: %w", shown, err)
	}
	for i, e := range list {
		if e == nil {
			continue
		}
		re := rowEntry{timelineEntry: e, row: offset + i}
		k := strconv.Itoa(i)
		if n, long := res.Long[k+"/body"]; long {
			re.tooLarge, re.bodyBytes = true, n
		}
		re.partial = res.Cut != nil && !res.Whole[k]
		entries = append(entries, re)
	}
	return entries, res.Cut != nil, nil
}

// timelineRows reads timeline rows [offset, offset+limit) (offset a
// multiple of limit): one request, and, when its answer is over the cap,
// more around the entries too large to read, within MaxSplitRequests:
// after a cut the read goes on from the row after the entry it was cut in,
// in the largest pages that start there.
func (c *Client) timelineRows(ctx context.Context, number int64, offset, limit int) ([]rowEntry, error) {
	var out []rowEntry
	next, end := offset, offset+limit
	for next < end {
		if next != offset && c.splits.Add(1) > MaxSplitRequests {
			out = append(out, unreadRows(next, end-next))
			break
		}
		size := splitSize(next, end)
		entries, cut, err := c.readWindow(ctx, number, next, size)
		if err != nil {
			return nil, err
		}
		if !cut {
			out = append(out, entries...)
			next += size
			continue
		}
		// Cut off: whole entries, then the cut one marked partial.
		start := next
		next += len(entries) // the first row not read whole
		if k := len(entries) - 1; k >= 0 && entries[k].partial {
			last := &entries[k]
			switch {
			case last.ID == 0:
				// Cut before its id: nothing is known of it.
				*last = unreadRows(start+k, 1)
			case k == 0 || last.bodyBytes > issues.MaxCommentBytes:
				// Too large: keep id, type and author; go on after it.
				last.tooLarge = true
			default:
				// Cut in an entry that may fit a page: reread it first.
				entries, next = entries[:k], next-1
			}
		} else if len(entries) == 0 {
			entries, next = []rowEntry{unreadRows(start, 1)}, start+1
		}
		out = append(out, entries...)
	}
	return dedupeRows(out), nil
}

// splitSize is the largest aligned page from x ending by end.
func splitSize(x, end int) int {
	for s := min(end-x, PageSize); s > 1; s-- {
		if x%s == 0 {
			return s
		}
	}
	return 1
}

// dedupeRows keeps the first per id: a page reread from before its cut
// repeats some.
func dedupeRows(entries []rowEntry) []rowEntry {
	seen := make(map[int64]bool, len(entries))
	out := entries[:0]
	for _, e := range entries {
		if e.unread == 0 && e.ID != 0 {
			if seen[e.ID] {
				continue
			}
			seen[e.ID] = true
		}
		out = append(out, e)
	}
	return out
}
