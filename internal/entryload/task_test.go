package entryload

import (
	"errors"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/markdown"
)

func TestTaskSection(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"template", "## Task\n\nAdd rate limits to the gateway.\nDone when the tests pass.\n\n## Checkpoint\n\nsome words\n\n```yaml\ncheckpoint:\n  version: 2\n```\n",
			"Add rate limits to the gateway.\nDone when the tests pass."},
		{"subheadings stay", "# Task\n\nDo it.\n\n## Details\n\nMore.\n\n# Other\n\nnot the task\n", "Do it.\n\n## Details\n\nMore."},
		{"ends at the checkpoint", "## task ##\r\nShort.\r\n```yaml\r\ncheckpoint:\r\n  version: 2\r\n```\r\n", "Short."},
		{"a heading in code is text", "## Task\n\n```sh\n## not a heading\n```\nafter\n## Next\n", "```sh\n## not a heading\n```\nafter"},
		{"none", "# Rate limits\n\nno task here\n", ""},
		{"empty", "## Task\n\n   \n## Checkpoint\n", ""},
		{"a deeper heading is not it", "### Task\n\nno\n", ""},
		{"in a fence it is not it", "```\n## Task\nno\n```\n", ""},
	}
	for _, c := range cases {
		if got := TaskSection(c.body); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// The task comes first and is never cut, as the checkpoint: lower
// priorities give way to it.
func TestAssembleLoadsTheTaskFirst(t *testing.T) {
	task := "Add rate limits to the gateway: " + strings.Repeat("a detail of the task. ", 60)
	in := Input{Issue: 42, Checkpoint: checkpointYAML, Task: task, Counter: counter(t),
		Comments: []Comment{{ID: 1, Author: "alice", Body: strings.Repeat("a long note ", 300)}},
		Budget:   LoadCap{Cap: 1000, Explicit: true}}
	l, err := Assemble(in)
	if err != nil {
		t.Fatal(err)
	}
	if l.Sections[0].Kind != KindTask || l.Sections[0].Status != Kept || l.Sections[1].Kind != KindCheckpoint {
		t.Fatalf("sections %+v", l.Sections[:2])
	}
	if !strings.Contains(l.Text, "## P0 Task of issue #42\n"+markdown.Fence("markdown", task)) {
		t.Errorf("the task is not loaded whole:\n%s", l.Text)
	}
	if strings.Index(l.Text, "Task of issue") > strings.Index(l.Text, "Checkpoint of issue") {
		t.Error("the task is not loaded first")
	}
	if len(l.Dropped) != 1 || l.Tokens > in.Budget.Cap {
		t.Errorf("dropped %v, %d tokens of %d", l.Dropped, l.Tokens, in.Budget.Cap)
	}

	in.Budget.Cap = in.Counter.Count(task) // the checkpoint and the task cannot both fit
	_, err = Assemble(in)
	var oc *OverCapError
	if !errors.As(err, &oc) || oc.Task != in.Counter.Count(task) || !strings.Contains(err.Error(), "task section") {
		t.Errorf("err %v", err)
	}
}
