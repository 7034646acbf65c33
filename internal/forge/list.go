package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	issuespkg "github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/jsoncap"
	"github.com/gns-guard/gns-guard/internal/port"
)

// ListIssues reads one page of the repository's issues in one request. The
// bodies are chosen by anyone who may open an issue, so the answer is read
// streamed and capped like the timeline (bounded.go): past the cap, the
// rest is read again in smaller pages, within MaxSplitRequests.
func (c *Client) ListIssues(ctx context.Context, q port.IssueQuery) (port.IssuePage, error) {
	if q.Page < 1 {
		q.Page = 1
	}
	if q.State == "" {
		q.State = "open"
	}
	offset := (q.Page - 1) * PageSize
	authors := map[int64]string{}
	issues, total, n, err := c.issueRows(ctx, q, offset, PageSize, authors)
	if err != nil {
		return port.IssuePage{}, err
	}
	last := n < PageSize || (total >= 0 && offset+PageSize >= total)
	return port.IssuePage{Issues: issues, Authors: authors, Total: total, Last: last}, nil
}

// listedIssue is a listed issue, with its author.
type listedIssue struct {
	apiIssue
	User *struct {
		Login string `json:"login"`
	} `json:"user"`
}

// issueRows reads the issues at [offset, offset+limit) of the query (offset
// a multiple of limit), and says how many rows the server answered. An
// answer cut at the cap keeps the issues read whole, reads the one it was
// cut in alone, and the rest in the largest aligned pages after it.
func (c *Client) issueRows(ctx context.Context, q port.IssueQuery, offset, limit int, authors map[int64]string) (
	issues []issuespkg.Issue, total, rows int, err error) {
	v := url.Values{"state": {q.State}, "type": {"issues"}, "page": {strconv.Itoa(offset/limit + 1)}, "limit": {strconv.Itoa(limit)}}
	if q.CreatedBy != "" {
		v.Set("created_by", q.CreatedBy)
	}
	res, header, shown, err := c.getCappedHeader(ctx, c.repoPath()+"/issues?"+v.Encode(), issuespkg.MaxBodyBytes)
	if err != nil {
		return nil, 0, 0, err
	}
	total = -1
	if t, err := strconv.Atoi(header.Get("X-Total-Count")); err == nil && t >= 0 {
		total = t
	}
	var list []*listedIssue // Gitea answers [] for an empty page; null is read as none
	if err := json.Unmarshal(res.JSON, &list); err != nil {
		return nil, 0, 0, fmt.Errorf("GET %s: decoding the answer: %w", shown, err)
	}
	issues, rows, err = c.wholeIssues(ctx, list, res, shown, authors)
	if err != nil {
		return nil, 0, 0, err
	}
	if res.Cut == nil {
		return issues, total, len(list), nil
	}
	more, n, err := c.restOfWindow(ctx, q, offset, limit, rows, shown, authors)
	if err != nil {
		return nil, 0, 0, err
	}
	return append(issues, more...), total, rows + n, nil
}

// wholeIssues keeps the issues of a page's answer read whole, their authors
// in authors, and says how many rows they span. The issue the answer was cut
// in is read alone, by its number when the cut came after it; the rows after
// it are left to the caller.
func (c *Client) wholeIssues(ctx context.Context, list []*listedIssue, res *jsoncap.Result, shown string,
	authors map[int64]string) (issues []issuespkg.Issue, rows int, err error) {
	for i, a := range list {
		k := strconv.Itoa(i)
		if a == nil || (res.Cut != nil && !res.Whole[k]) {
			is, ok, err := c.issueCutIn(ctx, a, shown)
			if err != nil || !ok {
				return issues, rows, err
			}
			return append(issues, is), i + 1, nil
		}
		is := a.toGuard()
		if a.User != nil {
			authors[is.Number] = a.User.Login
		}
		if n, long := res.Long[k+"/body"]; long {
			is.Body, is.BodyTooLarge, is.BodyBytes = "", true, n
		}
		issues = append(issues, is)
		rows = i + 1
	}
	return issues, rows, nil
}

// issueCutIn rereads the issue a page was cut in, if its number arrived.
func (c *Client) issueCutIn(ctx context.Context, a *listedIssue, shown string) (issuespkg.Issue, bool, error) {
	if a == nil || a.Number < 1 {
		return issuespkg.Issue{}, false, nil
	}
	if c.splits.Add(1) > MaxSplitRequests {
		return issuespkg.Issue{}, false, &TooLargeError{Method: http.MethodGet, Path: shown, Limit: MaxAnswer}
	}
	is, err := c.readIssue(ctx, a.Number)
	if err != nil {
		return issuespkg.Issue{}, false, err
	}
	return is, true, nil
}

// restOfWindow reads the rows of the window [offset, offset+limit) after the
// first rows, which an answer cut at the cap held, in smaller aligned pages,
// and says how many rows the server answered for them.
func (c *Client) restOfWindow(ctx context.Context, q port.IssueQuery, offset, limit, rows int, shown string,
	authors map[int64]string) (issues []issuespkg.Issue, n int, err error) {
	if rows == 0 && limit == 1 {
		return nil, 0, &TooLargeError{Method: http.MethodGet, Path: shown, Limit: MaxAnswer}
	}
	next, end := offset+rows, offset+limit
	for next < end {
		if c.splits.Add(1) > MaxSplitRequests {
			return nil, 0, &TooLargeError{Method: http.MethodGet, Path: shown, Limit: MaxAnswer}
		}
		size := splitSize(next, end)
		if next == offset && size == limit {
			size = splitSize(next, end-1) // never the same window again
		}
		more, _, got, err := c.issueRows(ctx, q, next, size, authors)
		if err != nil {
			return nil, 0, err
		}
		issues = append(issues, more...)
		n += got
		if got < size {
			break // the end of the list
		}
		next += size
	}
	return issues, n, nil
}

// CreateIssue opens an issue with title and body: one request.
func (c *Client) CreateIssue(ctx context.Context, title, body string) (issuespkg.Issue, error) {
	in := struct {
		Title string `json:"title"`
		Body  string `json:"body"`
	}{title, body}
	var a apiIssue
	if err := c.do(ctx, http.MethodPost, c.repoPath()+"/issues", in, &a); err != nil {
		return issuespkg.Issue{}, err
	}
	return a.toGuard(), nil
}

// EditIssue is last-write-wins (no content_version): only for the guard's
// own issues (the dashboard).
func (c *Client) EditIssue(ctx context.Context, number int64, e port.IssueEdit) (issuespkg.Issue, error) {
	var a apiIssue
	if err := c.do(ctx, http.MethodPatch, c.issuePath(number), e, &a); err != nil {
		return issuespkg.Issue{}, err
	}
	return a.toGuard(), nil
}
