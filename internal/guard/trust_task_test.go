package guard

import (
	"slices"
	"testing"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// TestTaskChangers reads who changed the task from the body's edit
// history: every revision that changed the task section after the last
// one that holds the accepted task, a revision deleted from the history
// included; the accepted text comes back from it.
func TestTaskChangers(t *testing.T) {
	body := func(task string) string { return "## Task\n\n" + task + "\n\n## Checkpoint\n" }
	accepted := TaskDigest(body("rate limits"))
	for _, c := range []struct {
		name    string
		revs    []issues.Revision
		by      []string
		unknown bool
	}{
		{"an agent's edit", []issues.Revision{{Editor: "owner", Text: body("rate limits")}, {Editor: "agent", Text: body("rate limits; push to main")}}, []string{"agent"}, false},
		{"a checkpoint edit is no task edit", []issues.Revision{{Editor: "owner", Text: body("rate limits")}, {Editor: "agent", Text: body("rate limits") + "x"}, {Editor: "owner", Text: body("new task")}}, []string{"owner"}, false},
		{"a deleted revision counts", []issues.Revision{{Editor: "owner", Text: body("rate limits")}, {Editor: "agent", Deleted: true}, {Editor: "owner", Text: body("new task")}}, []string{"agent", "owner"}, false},
		{"the accepted task is not in the history", []issues.Revision{{Editor: "agent", Text: body("other")}}, nil, true},
	} {
		by, text, unknown := bodyChangers(accepted, &TaskEdits{Revisions: c.revs})
		if !slices.Equal(by, c.by) || unknown != c.unknown {
			t.Errorf("%s: by %q unknown %v, want %q %v", c.name, by, unknown, c.by, c.unknown)
		}
		if !unknown && text != "rate limits" {
			t.Errorf("%s: the accepted text %q", c.name, text)
		}
	}
	if _, _, unknown := bodyChangers(accepted, &TaskEdits{BodyProblem: "private"}); !unknown {
		t.Error("an unreadable history tells nobody")
	}
	titles := []issues.TitleChange{{Old: "older", New: "Rate limits", Actor: "owner"}, {Old: "Rate limits", New: "Push to main", Actor: "agent"}}
	if by, unknown := titleChangers(TitleDigest("Rate limits"), &TaskEdits{Titles: titles}); !slices.Equal(by, []string{"agent"}) || unknown {
		t.Errorf("title: by %q unknown %v", by, unknown)
	}
	if _, unknown := titleChangers(TitleDigest("never"), &TaskEdits{Titles: titles}); !unknown {
		t.Error("a title change the timeline does not show tells nobody")
	}
}

// TestBodyEditorFromTheEditsOwnRun: the first attempt of an issues.edited
// run names who saved the body when its payload holds what the run reads
// live; a re-run, another event, a payload that no longer matches and an
// unknown attempt name no one.
func TestBodyEditorFromTheEditsOwnRun(t *testing.T) {
	live := "## Task\n\nrate limits, per route later\n"
	same := func(saved string) bool { return TaskDigest(saved) == TaskDigest(live) }
	edited := issues.Event{Name: "issues", Action: "edited", Sender: "owner", Attempt: 1, Saved: &issues.Saved{Body: live}}
	for _, c := range []struct {
		name string
		edit func(*issues.Event)
		want string
	}{
		{"the edit's first attempt", func(*issues.Event) {}, "owner"},
		{"a re-run", func(e *issues.Event) { e.Attempt = 2 }, ""},
		{"attempt not known", func(e *issues.Event) { e.Attempt = 0 }, ""},
		{"a comment's run", func(e *issues.Event) { e.Name, e.Action = "issue_comment", "created" }, ""},
		{"a later edit changed the task", func(e *issues.Event) { e.Saved = &issues.Saved{Body: "## Task\n\nrate limits\n"} }, ""},
		{"no issue in the payload", func(e *issues.Event) { e.Saved = nil }, ""},
	} {
		ev := edited
		c.edit(&ev)
		e := &decision{in: Input{Event: ev}}
		if got := e.bodyEditor(same); got != c.want {
			t.Errorf("%s: editor %q, want %q", c.name, got, c.want)
		}
	}
}
