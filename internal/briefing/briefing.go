package briefing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/entryload"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/fence"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// Request is what a briefing is assembled from.
type Request struct {
	// Issue is the issue read (Read, ReadOffline); Config the guard's
	// configuration for it.
	Issue  Issue
	Config config.Config
	// Files and Skill are loaded after the entry load, in that order
	// (ReadDocs).
	Files []entryload.Doc
	Skill *entryload.Doc
	// Size is a task size that overrides the guard's ("": the guard's);
	// Cap, if positive, the cap that overrides the size's.
	Size string
	Cap  int
	// FullComments loads the older agent results whole too.
	FullComments bool
	// Fence puts the text between stop-commands markers, which count
	// against the cap: inside Gitea Actions no issue text may run a
	// workflow command.
	Fence bool
	// Now reads the clock.
	Now func() time.Time
	// Notes receives warnings and a refused checkpoint's findings, a
	// line each; nil discards them.
	Notes io.Writer
}

// Assemble assembles the entry load req asks for. An error keeps its exit
// code's class (package exitcode); a checkpoint that alone does not fit
// is an *OverCapError (exit 1).
func Assemble(ctx context.Context, req Request) (*Result, error) {
	if req.Notes == nil {
		req.Notes = io.Discard
	}
	counter, err := tokens.New(req.Config.Encoding)
	if err != nil {
		return nil, &exitcode.CannotRunError{Err: err}
	}
	s := req.Issue
	parsed, err := req.checkpoint()
	if err != nil {
		return nil, err
	}
	if s.online {
		if err := s.reader.RefuseUnjudged(ctx, "context", s.Snapshot, req.Config, req.Now()); err != nil {
			return nil, err
		}
	}
	plan, err := req.figures(ctx, counter)
	if err != nil {
		return nil, err
	}
	number, cp := s.Issue.Number, parsed.Checkpoint
	if err := req.acceptedTask(plan, number); err != nil {
		return nil, err
	}
	budget, err := req.budget(plan.Numbers, number)
	if err != nil {
		return nil, err
	}
	load, fc, err := req.assemble(req.entry(parsed, budget, counter, plan), counter)
	if oc, ok := errors.AsType[*entryload.OverCapError](err); ok {
		return nil, overCap(oc, cp)
	}
	if err != nil {
		return nil, &exitcode.CannotRunError{Err: fmt.Errorf("context: %w", err)}
	}
	room := guard.RoomOf(plan.Numbers, req.Config)
	return &Result{
		Report:         Report{Fits: true, Load: load, CurrentTask: cp.CurrentTask.Value, CostCheck: newCostCheck(load.Planned, budget.Cap), Next: &room},
		Fence:          fc,
		Budget:         budget,
		Issue:          number,
		At:             req.Now(),
		FilesRequested: len(req.Files),
		entries:        len(cp.Entries()),
	}, nil
}

// checkpoint parses the issue's checkpoint and refuses one no agent
// should resume from. An issue read offline with no number takes the
// checkpoint's.
func (req Request) checkpoint() (checkpoint.Result, error) {
	s := req.Issue
	number := s.Issue.Number
	parsed := checkpoint.Parse(s.Issue.Body, checkpoint.Options{Issue: number})
	if err := live.AwaitGuard("context", s.Snapshot, parsed); err != nil {
		return parsed, err
	}
	if err := req.loadable(parsed, number); err != nil {
		return parsed, err
	}
	if number == 0 {
		s.Issue.Number = parsed.Checkpoint.Issue.Value
	}
	return parsed, nil
}

// loadable refuses an issue no agent should resume from: no checkpoint
// block, or one that cannot be trusted (exit 1), or an issue the guard
// does not govern (exit 2).
func (req Request) loadable(parsed checkpoint.Result, number int64) error {
	s := req.Issue
	where := fmt.Sprintf("issue #%d", number)
	if s.source != "" {
		where = s.source
	}
	if len(parsed.Blocks) == 0 && s.ungoverned() {
		// Not an issue the guard governs: a wrong --issue, or one not
		// opened from the template. Recovery cannot help (docs/choices.md).
		return usageError("context: %s is not governed by gns-guard: it has no checkpoint block, no cascade:: or budget:: label and no "+
			"status comment of the guard; check --issue, or open the task from the %q issue template", where, issues.TaskTemplate)
	}
	if len(parsed.Blocks) == 0 {
		return &exitcode.ViolationError{Err: fmt.Errorf("context: %s has no checkpoint block (a ```yaml fenced block whose root key is "+
			"checkpoint): there is no state for an agent to load; run 'gns-guard schema' for its shape", where)}
	}
	if parsed.Valid() {
		return nil
	}
	prefix := where
	if s.source == "" {
		prefix = fmt.Sprintf("issue#%d", number)
	}
	for _, f := range parsed.Findings {
		fmt.Fprintln(req.Notes, f.Format(prefix))
	}
	return &exitcode.ViolationError{Err: fmt.Errorf("context: the checkpoint of %s cannot be trusted (see above): an agent must not resume "+
		"from it; fix the body (check it with 'gns-guard check') or ask for recovery with a '## 🔄 context-recovery-needed' comment", where)}
}

// figures is the guard's decision on the issue, decided as its run on an
// edit would: its figures, and who speaks on the issue.
func (req Request) figures(ctx context.Context, counter *tokens.Counter) (*guard.Plan, error) {
	s := req.Issue
	repo := ""
	if s.online {
		repo = s.reader.Where.Repo
	}
	in := s.Input(req.Config, issues.Event{Name: "issues", Action: "edited", Number: s.Issue.Number}, repo, req.Now(), counter)
	in.LabelsUnknown = !s.labelsKnown
	plan, _, err := s.reader.Decide(ctx, in)
	return plan, err
}

// acceptedTask refuses (exit 1) an issue whose task someone who may not
// changed since the guard accepted it, when the accepted task cannot be
// read back from the body's edit history; when it can, the load holds it
// in place of the body's and a note says so (docs/ledger.md#the-task).
func (req Request) acceptedTask(plan *guard.Plan, n int64) error {
	v := plan.Task
	if v == nil || !v.Changed {
		return nil
	}
	if v.Accepted == "" {
		return &exitcode.ViolationError{Err: fmt.Errorf("context: issue #%d: the task was changed since the guard accepted it, by %s, and "+
			"the task as accepted is not in the body's edit history (Gitea shows it only on a public repository): an agent must not work "+
			"from a task the person did not set; %s", n, v.Who(), v.Step())}
	}
	who := strings.ReplaceAll(strings.TrimRight(v.Who(), "\n"), "\n", " ")
	fmt.Fprintf(req.Notes, "gns-guard: context: warning: issue #%d: the task was changed since the guard accepted it, by %s: the load holds "+
		"the task as accepted, read from the body's edit history\n", n, who)
	return nil
}

// budget is the cap of the load: the task size's (req.Size, else the
// guard's), unless req.Cap gives one.
func (req Request) budget(nums guard.Numbers, number int64) (entryload.LoadCap, error) {
	size, ok := issues.TaskSizeNamed(nums.TaskSize)
	if req.Size != "" {
		size, ok = issues.TaskSizeNamed(req.Size)
	}
	if !ok {
		return entryload.LoadCap{}, &exitcode.CannotRunError{Err: fmt.Errorf("context: issue #%d: the guard reported no task size", number)}
	}
	if req.Size == "" && size.Inferred && nums.NextEstimated >= issues.TooLargeEstimate {
		fmt.Fprintf(req.Notes, "gns-guard: context: warning: issue #%d: next_estimated_tokens %d is over the largest task size (< %s): the "+
			"guard fails it as task-too-large; split the task\n", number, nums.NextEstimated, tokens.Format(issues.TooLargeEstimate))
	}
	budget := entryload.LoadCap{Cap: int(size.Available()), Size: size.Name, MaxContext: int(size.MaxContext), Overhead: int(size.Overhead)}
	if req.Cap > 0 {
		budget.Cap, budget.Explicit = req.Cap, true
	}
	return budget, nil
}

// entry is what the load is assembled from: the entry load the guard
// measures (entryload.Entry: the task, the checkpoint, the last comments
// that are not the guard's own and whose authors may speak), and the
// files and skill, under the budget.
func (req Request) entry(parsed checkpoint.Result, budget entryload.LoadCap, counter *tokens.Counter, plan *guard.Plan) entryload.Input {
	s, nums := req.Issue, plan.Numbers
	in := entryload.Entry(entryload.Issue{Number: s.Issue.Number, Agent: nums.Agent, Body: s.Issue.Body, Checkpoint: parsed.Block().Text(),
		Recent: s.Recent.Comments, Guard: s.Guard, Authors: plan.Authors, Missing: plan.MissingResults()}, counter)
	if task, note := plan.EntryTask(); task != "" {
		in.Task, in.TaskNote = task, note
	}
	in.Files, in.Skill, in.FullComments, in.Budget = req.Files, req.Skill, req.FullComments, budget
	in.Guard = &entryload.GuardFigure{
		ContextTokens: nums.ContextTokens, EntryTokens: nums.EntryTokens, CheckpointTokens: nums.CheckpointTokens, CommentTokens: nums.CommentTokens,
		NextEstimated: nums.NextEstimated, TaskSize: nums.TaskSize, MaxContext: nums.MaxContext, ContextRatio: nums.ContextRatio,
	}
	return in
}

// assemble assembles the load; with req.Fence, the markers count against
// the cap, and the fence is returned.
func (req Request) assemble(in entryload.Input, counter *tokens.Counter) (*entryload.Load, *fence.Fence, error) {
	if !req.Fence {
		load, err := entryload.Assemble(in)
		return load, nil, err
	}
	fc := fence.New()
	in.Reserve = counter.Count(fc.Open()) + counter.Count(fc.Close())
	load, err := entryload.Assemble(in)
	for err == nil {
		// The markers' count adds up with the text's at line breaks; make sure.
		over := counter.Count(fc.Open()+load.Text+fc.Close()) - in.Budget.Cap
		if over <= 0 {
			break
		}
		in.Reserve += over
		load, err = entryload.Assemble(in)
	}
	return load, &fc, err
}
