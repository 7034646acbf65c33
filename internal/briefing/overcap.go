package briefing

import (
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/entryload"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// OverCapNumbers are the figures of a checkpoint that alone does not fit.
type OverCapNumbers struct {
	Issue      int64 `json:"issue"`
	Checkpoint int   `json:"checkpoint_tokens"`
	Task       int   `json:"task_tokens"`
	Minimal    int   `json:"minimal_tokens"`
	entryload.LoadCap
}

// OverCapError says the checkpoint alone does not fit the cap, and how to
// prune it. Assemble returns it inside an exitcode.ViolationError (exit
// 1); Report is its JSON answer.
type OverCapError struct {
	Report Report
}

func (e *OverCapError) Error() string { return "context: " + e.Report.Error }

// overCap is the refusal of a checkpoint that alone does not fit.
func overCap(oc *entryload.OverCapError, cp *checkpoint.Checkpoint) error {
	var how []string
	n := len(cp.Entries())
	if n > checkpoint.DefaultTailLimit || cp.History.Set {
		how = append(how, fmt.Sprintf("move its %d history entries into archive comments, keeping the last %d in history_tail (the guard "+
			"does so on its next run when the checkpoint is over the task's overhead of %s tokens or 80%% of the budget is used; 'gns-guard "+
			"prune BODY' prints the result)",
			n, checkpoint.DefaultTailLimit, tokens.Format(oc.Budget.Overhead)))
	} else {
		how = append(how, fmt.Sprintf("it holds no history left to prune (%d entries in history_tail)", n))
	}
	if l := len(cp.CurrentTask.Value); l > 200 {
		how = append(how, fmt.Sprintf("shorten current_task (%s characters) and other long values", tokens.Format(l)))
	} else {
		how = append(how, "shorten its longest values")
	}
	if oc.Task > 0 {
		how = append(how, fmt.Sprintf("shorten the body's ## Task section (%s tokens), which is loaded whole", tokens.Format(oc.Task)))
	}
	how = append(how, "or give the task a larger size:: label (or pass a larger --cap)")
	msg := fmt.Sprintf("%v. Prune the issue before an agent loads it: %s", oc, strings.Join(how, "; "))
	return &exitcode.ViolationError{Err: &OverCapError{Report{Fits: false, CurrentTask: cp.CurrentTask.Value, Error: msg,
		OverCap: &OverCapNumbers{Issue: oc.Issue, Checkpoint: oc.Checkpoint, Task: oc.Task, Minimal: oc.Minimal + oc.Reserve, LoadCap: oc.Budget}}}}
}
