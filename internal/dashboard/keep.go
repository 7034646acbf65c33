package dashboard

import (
	"context"
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/port"
)

// MaxClosedPages bounds the search for a dashboard a person closed, among
// the closed issues (50 a page, newest first; only those its user opened
// when the server can filter by that user).
const MaxClosedPages = 4

// Kept says what Keep did.
type Kept struct {
	// Number is the dashboard issue's number.
	Number int64 `json:"number"`
	// Action is "created", "edited", "reopened" (and edited) or "unchanged".
	Action string `json:"action"`
}

// IsDashboard reports whether an issue is the dashboard of the guard's
// user login: its body holds the marker and login opened it. An issue with
// the marker opened by anyone else is not.
func IsDashboard(is issues.Issue, author, login string) bool {
	return login != "" && author == login && !is.IsPull && strings.Contains(is.Body, Marker)
}

// Find returns the oldest dashboard among issues, or false.
func Find(listed []Listed, login string) (issues.Issue, bool) {
	var found issues.Issue
	ok := false
	for _, l := range listed {
		if IsDashboard(l.Issue, l.Author, login) && (!ok || l.Issue.Number < found.Number) {
			found, ok = l.Issue, true
		}
	}
	return found, ok
}

// Keep writes body into the repository's one dashboard issue: the open
// one login opened with the marker among listed (the sweep's open issues),
// else a closed one (reopened), else a new issue. It edits in place and
// never opens a second one while the first can be found.
func Keep(ctx context.Context, w port.IssueLister, listed []Listed, login, body string) (Kept, error) {
	if is, ok := Find(listed, login); ok {
		if is.Body == body {
			return Kept{Number: is.Number, Action: "unchanged"}, nil
		}
		if _, err := w.EditIssue(ctx, is.Number, port.IssueEdit{Body: &body}); err != nil {
			return Kept{}, fmt.Errorf("edit the dashboard issue #%d: %w", is.Number, err)
		}
		return Kept{Number: is.Number, Action: "edited"}, nil
	}
	closed, err := findClosed(ctx, w, login)
	if err != nil {
		return Kept{}, err
	}
	if closed > 0 {
		open := "open"
		if _, err := w.EditIssue(ctx, closed, port.IssueEdit{Body: &body, State: &open}); err != nil {
			return Kept{}, fmt.Errorf("reopen the dashboard issue #%d: %w", closed, err)
		}
		return Kept{Number: closed, Action: "reopened"}, nil
	}
	is, err := w.CreateIssue(ctx, Title, body)
	if err != nil {
		return Kept{}, fmt.Errorf("open the dashboard issue: %w", err)
	}
	return Kept{Number: is.Number, Action: "created"}, nil
}

// findClosed searches MaxClosedPages of closed issues; 0 when none.
func findClosed(ctx context.Context, w port.IssueLister, login string) (int64, error) {
	q := port.IssueQuery{State: "closed", CreatedBy: login}
	if login == issues.ActionsUser {
		q.CreatedBy = "" // not a user Gitea filters by: it answers 404
	}
	var listed []Listed
	for p := 1; p <= MaxClosedPages; p++ {
		q.Page = p
		page, err := w.ListIssues(ctx, q)
		if err != nil {
			return 0, fmt.Errorf("look for a closed dashboard issue: %w", err)
		}
		for _, is := range page.Issues {
			listed = append(listed, Listed{is, page.Authors[is.Number]})
		}
		if page.Last || len(page.Issues) == 0 {
			break
		}
	}
	if is, ok := Find(listed, login); ok {
		return is.Number, nil
	}
	return 0, nil
}
