package fakeforge

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// The runs are what Gitea's Actions notifier records, read as the guard
// reads them: an opening with its labels, an edit carrying the body as
// saved and no previous body, a label change naming what it changed, a
// comment, and no run for what the Actions user writes.
func TestRunsAreGiteasActionsEvents(t *testing.T) {
	s := New("org/proj")
	s.Grant("agent", "write")
	n := s.OpenIssue(issues.Issue{Title: "a task", Body: "v1", Labels: []issues.Label{{Name: "size::small"}}}, "org")
	agent := s.As("agent")
	if _, err := agent.EditBody(ctx, n, "v2", 0); err != nil {
		t.Fatal(err)
	}
	if err := agent.AddLabels(ctx, n, []string{"phase::review"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.CreateComment(ctx, n, "done"); err != nil {
		t.Fatal(err)
	}
	guard := s.As(issues.ActionsUser)
	if _, err := guard.CreateComment(ctx, n, "the status"); err != nil {
		t.Fatal(err)
	}
	if err := guard.RemoveLabel(ctx, n, issues.Label{Name: "phase::review"}); err != nil {
		t.Fatal(err)
	}
	runs := s.Runs()
	var got []string
	for _, r := range runs {
		got = append(got, r.Event+"."+r.Action+" by "+r.Sender)
	}
	want := []string{"issues.opened by org", "issues.edited by agent", "issues.label_updated by agent", "issue_comment.created by agent"}
	if !slices.Equal(got, want) {
		t.Fatalf("runs %q, want %q", got, want)
	}
	var evs []issues.Event
	for _, r := range runs {
		ev, err := issues.ParseEvent(r.Event, r.Payload)
		if err != nil {
			t.Fatalf("%s: %v\n%s", r.Event, err, r.Payload)
		}
		evs = append(evs, ev)
	}
	if evs[1].Saved == nil || evs[1].Saved.Body != "v2" {
		t.Errorf("the edit's payload does not carry the body as saved: %+v\n%s", evs[1].Saved, runs[1].Payload)
	}
	if !slices.Equal(evs[2].AddedLabels, []string{"phase::review"}) || evs[2].Action != "labeled" {
		t.Errorf("the label change: %+v", evs[2])
	}
	if evs[3].Comment == nil || evs[3].Comment.Body != "done" || evs[3].Comment.Author != "agent" {
		t.Errorf("the comment: %+v", evs[3].Comment)
	}
	var edit map[string]any
	if err := json.Unmarshal(runs[1].Payload, &edit); err != nil || edit["changes"] != nil {
		t.Errorf("the issue edit carries changes, as only a webhook does: %s", runs[1].Payload)
	}
	if first := s.issues[n].timeline[0].label; first == nil || first.Label != "size::small" || first.Actor != "org" {
		t.Errorf("the opening's label is not on the timeline as its author's: %+v", first)
	}
}
