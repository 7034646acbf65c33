package handoff

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/markdown"
)

// SubIssue is a sub-task the gate opens under an invocation of issue
// Parent (docs/gate.md#sub-issues): its own issue, task and budget.
type SubIssue struct {
	Parent           int64
	ParentInvocation string
	ParentAgent      string
	// Login is the agent's login the gate verified.
	Login       string
	Title, Task string
	// Agent takes the task up at Depth, with Budget tokens and an entry
	// of Estimate.
	Agent                   string
	Depth, Budget, Estimate int64
	// Labels go on the issue and in state.labels: the parent's cascade
	// limit.
	Labels []string
	Now    time.Time
}

// Body is the sub-issue's body: the task, where it came from, and a
// checkpoint the guard's first run numbers (issue: 0).
func (s SubIssue) Body() string {
	var b strings.Builder
	b.WriteString("## Task\n\n")
	b.WriteString(safeText(s.Task))
	fmt.Fprintf(&b, "\n\nOpened through the gate for `%s` by invocation %s (agent %s) of #%d.\n\n",
		strings.ReplaceAll(s.Login, "`", ""), markdown.Cell(s.ParentInvocation, 80), markdown.Cell(s.ParentAgent, 80), s.Parent)
	b.WriteString("## Checkpoint\n\n```yaml\n")
	b.Write(s.checkpoint())
	b.WriteString("```\n")
	return b.String()
}

// checkpoint is the new checkpoint, as YAML.
func (s SubIssue) checkpoint() []byte {
	type budget struct {
		Total     int64 `yaml:"total"`
		Consumed  int64 `yaml:"consumed"`
		Remaining int64 `yaml:"remaining"`
	}
	type state struct {
		Labels   []string `yaml:"labels,flow"`
		Assignee string   `yaml:"assignee"`
	}
	cp := struct {
		Version        int    `yaml:"version"`
		Issue          int    `yaml:"issue"`
		Phase          string `yaml:"phase"`
		Depth          int64  `yaml:"depth"`
		LastAgent      string `yaml:"last_agent"`
		LastInvocation string `yaml:"last_invocation"`
		Budget         budget `yaml:"budget"`
		State          state  `yaml:"state"`
		NextAgent      string `yaml:"next_agent"`
		NextEstimate   int64  `yaml:"next_estimated_tokens"`
		CreatedAt      string `yaml:"created_at"`
	}{2, 0, "planning", s.Depth, s.ParentAgent, s.ParentInvocation, budget{s.Budget, 0, s.Budget},
		state{append([]string{}, s.Labels...), s.Agent}, s.Agent, s.Estimate, s.Now.UTC().Format(time.RFC3339)}
	data, _ := yaml.Marshal(map[string]any{"checkpoint": cp}) // plain fields: never fails
	return data
}
