package fakeforge

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// A Run is a workflow run an event recorded: what a runner hands the
// guard's step. As Gitea 1.26's Actions notifier (services/actions/
// notifier.go) makes them, and not as its webhooks do: an issue edit
// carries the issue as saved and no `changes`; a label change is action
// label_updated with changes.added_labels / removed_labels; a comment's
// edit carries changes.body.from; and a write of the Actions user records
// none (notifier_helper.go: Doer.IsGiteaActions).
type Run struct {
	// Event is the server's event: issues, issue_comment (a comment on a
	// pull request too) or pull_request. A pull request's runs carry the
	// name of the workflow's `on:` entry that matched as GITHUB_EVENT_NAME
	// (pull_request_target, say): the workflow's business, not the
	// server's.
	Event string
	// Action, Number and Sender are the payload's.
	Action string
	Number int64
	Sender string
	// Commit is the run's commit (GITHUB_SHA): the default branch's last
	// commit when the event happened ("" before CommitFiles made one).
	Commit string
	// Payload is the event file, as the runner writes it: the payload
	// decoded into a map and marshalled again (keys sorted, compact).
	Payload []byte
}

// Runs are the runs recorded so far, oldest first.
func (s *Server) Runs() []Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.runs)
}

// OpenIssue opens an issue as author, as AddIssue does, and records the
// run of its issues.opened event: an issue opened with its labels at
// once, as the API's create does, whose timeline shows each label added
// by author (models/issues/issue_update.go newIssue: newIssueLabel).
func (s *Server) OpenIssue(is issues.Issue, author string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.addIssue(is, author)
	it := s.issues[n]
	for _, l := range it.is.Labels {
		s.nextID++
		it.timeline = append(it.timeline, entry{label: &issues.LabelEvent{Label: l.Name, LabelID: l.ID, Added: true, Actor: author, At: it.is.CreatedAt}})
	}
	s.notify(author, "opened", it, nil)
	return n
}

// OpenPull opens a pull request as AddPull does, and records the run of
// its opening (NewPullRequest: event pull_request, action opened).
func (s *Server) OpenPull(is issues.Issue, author, head string, paths []string) int64 {
	n := s.AddPull(is, author, head, paths)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notify(author, "opened", s.issues[n], nil)
	return n
}

// notify records the run of an event on issue is that sender caused,
// with the payload's fields beyond action, number, issue, repository and
// sender (the lock held). The Actions user's events record none.
func (s *Server) notify(sender, action string, is *issue, more map[string]any) {
	if sender == issues.ActionsUser {
		return
	}
	event := "issues"
	if is.is.IsPull {
		event = "pull_request"
	}
	if _, ok := more["comment"]; ok {
		event = "issue_comment"
	}
	p := map[string]any{
		"action": action,
		"number": is.is.Number,
		"issue":  s.apiIssue(is),
		"repository": map[string]any{"id": s.repoID, "name": s.name, "full_name": s.Repo(),
			"owner": map[string]any{"login": s.owner}, "html_url": URL + "/" + s.Repo()},
		"sender": map[string]any{"login": sender, "username": sender},
	}
	for k, v := range more {
		p[k] = v
	}
	if event == "pull_request" {
		p["pull_request"] = map[string]any{"number": is.is.Number, "title": is.is.Title, "body": is.is.Body,
			"head": map[string]any{"ref": is.head}, "base": map[string]any{"ref": is.base}}
		delete(p, "issue")
	}
	// The runner gets the payload as a map and writes json.Marshal of it.
	b, err := json.Marshal(p)
	var m map[string]any
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err == nil {
		b, err = json.Marshal(m)
	}
	if err != nil {
		panic("fakeforge: a payload: " + err.Error())
	}
	s.runs = append(s.runs, Run{Event: event, Action: action, Number: is.is.Number, Sender: sender, Commit: s.heads[s.DefaultBranch], Payload: b})
}

// apiIssue is the issue as Gitea's convert.ToAPIIssue writes it in a
// payload (the lock held).
func (s *Server) apiIssue(is *issue) map[string]any {
	v := is.view()
	labels := []map[string]any{}
	for _, l := range v.Labels {
		labels = append(labels, s.apiLabel(l))
	}
	out := map[string]any{
		"id": v.Number, "number": v.Number, "title": v.Title, "body": v.Body,
		"user": map[string]any{"login": is.author}, "labels": labels, "state": v.State,
		"is_locked": v.Locked, "comments": v.Comments, "created_at": v.CreatedAt, "updated_at": v.UpdatedAt,
		"html_url": fmt.Sprintf("%s/%s/issues/%d", URL, s.Repo(), v.Number), "assignees": is.assignees,
		"pull_request": nil,
	}
	if v.IsPull {
		out["pull_request"] = map[string]any{"merged": false}
	}
	return out
}

// apiLabel is a label as a payload carries it (the lock held).
func (s *Server) apiLabel(l issues.Label) map[string]any {
	out := map[string]any{"id": l.ID, "name": l.Name}
	for _, r := range s.labels {
		if r.ID == l.ID {
			out["color"] = r.Color
		}
	}
	return out
}

// apiComment is a comment as a payload carries it.
func apiComment(c issues.Comment) map[string]any {
	return map[string]any{"id": c.ID, "body": c.Body, "html_url": c.HTMLURL, "created_at": c.CreatedAt,
		"updated_at": c.UpdatedAt, "user": map[string]any{"login": c.Author}}
}
