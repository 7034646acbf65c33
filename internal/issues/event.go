package issues

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Event is what triggered a run. It is only a trigger: the issue's labels
// and body are read live, never taken from the payload.
type Event struct {
	// Name is the workflow event, e.g. issues, issue_comment,
	// pull_request_target.
	Name string
	// Action reads Gitea's label_updated and label_cleared as labeled and
	// unlabeled.
	Action string
	// Number is the issue or pull request number.
	Number int64
	// Sender is the login of whoever caused the event.
	Sender string
	// Comment is the comment of an issue_comment event.
	Comment *Comment
	// IsPull covers pull-request events and comments on pull requests.
	IsPull bool
	// AddedLabels and RemovedLabels are from changes.added_labels /
	// removed_labels, when sent.
	AddedLabels, RemovedLabels []string
	// Saved is the issue's title and body as the payload carried them:
	// for Gitea's issues.edited, the issue as that edit saved it (nil when
	// the payload has no issue).
	Saved *Saved
	// Attempt is the run's attempt (GITHUB_RUN_ATTEMPT): 1 for the run the
	// event started, more for a re-run, whose payload is as old as the
	// run; 0 when not known.
	Attempt int
}

// Saved is the title and body an event's payload carried.
type Saved struct {
	Title, Body string
}

// pullEvents exclude comments, which arrive as issue_comment.
var pullEvents = []string{"pull_request_target", "pull_request", "pull_request_review", "pull_request_review_comment"}

// pullActions are the actions of a pull request the guard judges: every
// one that may change its files or its labels, and a review.
var pullActions = map[string]bool{"opened": true, "edited": true, "reopened": true, "synchronize": true, "synchronized": true,
	"labeled": true, "unlabeled": true,
	"submitted": true, "reviewed": true, "created": true}

// Supported says whether the guard acts on this event, and why not.
func (e Event) Supported() (bool, string) {
	ok := map[string]map[string]bool{
		"issues":        {"opened": true, "edited": true, "reopened": true, "labeled": true, "unlabeled": true},
		"issue_comment": {"created": true, "edited": true},
	}
	for _, name := range pullEvents {
		ok[name] = pullActions
	}
	if e.Name == "workflow_dispatch" || e.Name == "schedule" {
		// A person or schedule started it: issue-number names the issue.
		return e.Number > 0, "a " + e.Name + " run names no issue: set the issue-number input"
	}
	actions, known := ok[e.Name]
	if !known {
		return false, fmt.Sprintf("event %q is not one the guard handles (issues, issue_comment, pull_request_target, pull_request, "+
			"pull_request_review, workflow_dispatch and schedule with issue-number)", e.Name)
	}
	if !actions[e.Action] {
		return false, fmt.Sprintf("%s.%s needs no check", e.Name, e.Action)
	}
	return true, ""
}

// payload is what the guard reads of a Gitea or GitHub webhook.
type payload struct {
	Action string `json:"action"`
	Number int64  `json:"number"`
	Issue  *struct {
		Number      int64     `json:"number"`
		Title       string    `json:"title"`
		Body        string    `json:"body"`
		PullRequest *struct{} `json:"pull_request"`
	} `json:"issue"`
	PullRequest *struct {
		Number int64 `json:"number"`
	} `json:"pull_request"`
	Changes *struct {
		AddedLabels   []payloadLabel `json:"added_labels"`
		RemovedLabels []payloadLabel `json:"removed_labels"`
	} `json:"changes"`
	Comment *struct {
		ID        int64     `json:"id"`
		Body      string    `json:"body"`
		HTMLURL   string    `json:"html_url"`
		CreatedAt time.Time `json:"created_at"`
		UpdatedAt time.Time `json:"updated_at"`
		User      *struct {
			Login string `json:"login"`
		} `json:"user"`
	} `json:"comment"`
	IsPull bool `json:"is_pull"`
	Sender *struct {
		Login string `json:"login"`
	} `json:"sender"`
}

type payloadLabel struct {
	Name string `json:"name"`
}

func labelNames(ls []payloadLabel) []string {
	var out []string
	for _, l := range ls {
		if l.Name != "" {
			out = append(out, l.Name)
		}
	}
	return out
}

// ParseEvent reads an event payload (the file at GITHUB_EVENT_PATH).
func ParseEvent(name string, data []byte) (Event, error) {
	var p payload
	if err := json.Unmarshal(data, &p); err != nil {
		return Event{}, fmt.Errorf("the event payload is not valid JSON: %w", err)
	}
	e := Event{Name: name, Action: p.Action, IsPull: p.IsPull || slices.Contains(pullEvents, name)}
	switch e.Action {
	case "label_updated":
		e.Action = "labeled"
	case "label_cleared":
		e.Action = "unlabeled"
	case "synchronized":
		e.Action = "synchronize"
	}
	switch {
	case p.Issue != nil && p.Issue.Number > 0:
		e.Number = p.Issue.Number
		e.Saved = &Saved{Title: p.Issue.Title, Body: p.Issue.Body}
		if p.Issue.PullRequest != nil {
			e.IsPull = true
		}
	case p.PullRequest != nil && p.PullRequest.Number > 0:
		e.Number = p.PullRequest.Number
	default:
		e.Number = p.Number
	}
	if p.Sender != nil {
		e.Sender = p.Sender.Login
	}
	if p.Changes != nil {
		e.AddedLabels = labelNames(p.Changes.AddedLabels)
		e.RemovedLabels = labelNames(p.Changes.RemovedLabels)
	}
	if p.Comment != nil {
		c := Comment{ID: p.Comment.ID, Body: p.Comment.Body, HTMLURL: p.Comment.HTMLURL, CreatedAt: p.Comment.CreatedAt, UpdatedAt: p.Comment.UpdatedAt}
		if p.Comment.User != nil {
			c.Author = p.Comment.User.Login
		}
		e.Comment = &c
	}
	if e.Number <= 0 && name != "workflow_dispatch" && name != "schedule" {
		return e, fmt.Errorf("the %s event payload names no issue or pull request number", name)
	}
	return e, nil
}
