package agentwrite

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/handoff"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/issuetx"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/prune"
	"github.com/gns-guard/gns-guard/internal/secrets"
)

// MaxResultBytes bounds a Result section read from a file: its comment
// stays within what the guard reads (issues.MaxCommentBytes).
const MaxResultBytes = issues.MaxCommentBytes - 64<<10

// ReportRequest is an agent's exit: what it did, what comes next.
type ReportRequest struct {
	Issue  int64
	Report handoff.Report
	// DryRun writes nothing; Force writes a state the guard would fail.
	DryRun, Force bool
	// Held secrets make a write carrying one refused.
	Held []secrets.Secret
	// MeterToken asks the meter at meter-url, when configured.
	MeterToken string
}

// ReportResult is what Report did, for text or JSON.
type ReportResult struct {
	Issue      int64  `json:"issue"`
	Agent      string `json:"agent"`
	Invocation string `json:"invocation"`
	// Outcome is written, already-reported, refused or dry-run.
	Outcome        string            `json:"outcome"`
	Findings       []finding.Finding `json:"findings"`
	AlreadyFailing []string          `json:"already_failing,omitempty"`
	CommentID      int64             `json:"comment_id,omitempty"`
	CommentURL     string            `json:"comment_url,omitempty"`
	CommentPosted  bool              `json:"comment_posted"`
	Patched        bool              `json:"body_patched"`
	ContentVersion int               `json:"content_version,omitempty"`
	Attempts       int               `json:"attempts"`
	Before         prune.Budget      `json:"budget_before"`
	After          prune.Budget      `json:"budget_after"`
	NextAgent      string            `json:"next_agent"`
	NextEstimate   int64             `json:"next_estimated_tokens"`
	LabelsAdded    []string          `json:"labels_added"`
	LabelsRemoved  []string          `json:"labels_removed"`
	Assignee       *string           `json:"assignee,omitempty"`
	CurrentTask    *string           `json:"current_task,omitempty"`
	Notes          []string          `json:"notes,omitempty"`
	Comment        string            `json:"comment,omitempty"` // the comment's text (dry run)
	Body           string            `json:"body,omitempty"`    // the new body (dry run)
}

// ErrRefused is exit 1; the result explains.
var ErrRefused = &exitcode.Reported{Err: exitcode.ErrViolations}

// Report performs the agents' exit protocol (docs/agents.md, "For agent
// authors"): read the issue, decide the report and the guard's judgement
// of it, write. The result is nil only with an error; a refused report
// returns its result and ErrRefused.
func Report(ctx context.Context, c Conn, req ReportRequest) (*ReportResult, error) {
	w := &reporter{Conn: c, req: req}
	res := &ReportResult{Issue: req.Issue, Agent: req.Report.Agent, Findings: []finding.Finding{}, LabelsAdded: []string{}, LabelsRemoved: []string{}}
	w.res = res
	if err := w.openInvocation(ctx); err != nil {
		return nil, err
	}
	res.Invocation = w.req.Report.Invocation
	if err := w.fetchReceipt(ctx); err != nil {
		return nil, err
	}
	now := c.Now().UTC().Truncate(time.Second)
	err := issuetx.Run(ctx, func(ctx context.Context, a issuetx.Attempt) error {
		res.Attempts = a.N
		s, step, err := w.readAndDecide(ctx, now)
		if err != nil {
			return err
		}
		if err := w.refuseSecrets(step); err != nil && !step.already {
			return err
		}
		if !step.writes(w.req) {
			return w.finishUnwritten(ctx, s, step)
		}
		return w.write(ctx, s, step)
	}, func(next issuetx.Attempt, _ error) {
		res.Notes = append(res.Notes, fmt.Sprintf("the body changed while the report was written (HTTP 409); "+
			"read again and applied the same report to it (attempt %d)", next.N))
	})
	if err != nil && !errors.Is(err, ErrRefused) {
		return nil, err
	}
	return res, err
}

// reporter is one Report in progress.
type reporter struct {
	Conn
	req ReportRequest
	res *ReportResult
}

// reportStep is what Report decides on the issue as read.
type reportStep struct {
	out       *handoff.Outcome
	own       *issues.Comment // this invocation's comment, posted by an earlier run
	comment   string
	already   bool // the checkpoint records the invocation: nothing is written twice
	judgement handoff.Judgement
}

// readAndDecide reads the issue and decides the report on it.
func (w *reporter) readAndDecide(ctx context.Context, now time.Time) (*live.Snapshot, *reportStep, error) {
	s, err := w.Reader.Read(ctx, w.req.Issue, live.ReadOptions{Window: w.Config.RecentWindow(), Ungoverned: true})
	if err != nil {
		return nil, nil, err
	}
	step, err := w.decide(ctx, s, now)
	if err != nil {
		return nil, nil, err
	}
	if !step.already {
		// An earlier report of this invocation is answered as it was.
		if err := w.Reader.RefuseUnjudged(ctx, "report", s, w.Config, w.Now()); err != nil {
			return nil, nil, err
		}
	}
	return s, step, nil
}

// writes: new, not refused (unless forced), not dry.
func (st *reportStep) writes(req ReportRequest) bool {
	return !st.already && !(st.judgement.Refused() && !req.Force) && !req.DryRun
}

// finishUnwritten ends a repeat (labels fixed), a refusal, or a dry run.
func (w *reporter) finishUnwritten(ctx context.Context, s *live.Snapshot, step *reportStep) error {
	res := w.res
	switch {
	case step.already:
		if !w.req.DryRun {
			if err := w.applyLabels(ctx, s.Issue, step.out); err != nil {
				return w.Reader.Where.Error("update the labels", err)
			}
		}
		return nil
	case step.judgement.Refused() && !w.req.Force:
		res.Outcome = "refused"
		return ErrRefused
	}
	res.Outcome = "dry-run"
	res.Comment, res.Body = step.comment, step.out.Body
	res.LabelsAdded, res.LabelsRemoved = nonNilList(step.out.Add), nonNilList(step.out.Remove)
	return nil
}

// decide computes the report on the issue as read (handoff.Apply) and the
// guard's judgement of the state it leaves, and fills the result.
func (w *reporter) decide(ctx context.Context, s *live.Snapshot, now time.Time) (*reportStep, error) {
	n, cfg, res := s.Issue.Number, w.Config, w.res
	rep := w.req.Report
	rep.Now = now
	step := &reportStep{own: findOwn(s.Comments(), w.Self, rep.Agent, rep.Invocation)}
	if step.own != nil {
		// A re-run: the entry keeps the time the comment states.
		rep.Now = ownTime(step.own, rep.Now)
		res.CommentID, res.CommentURL = step.own.ID, step.own.HTMLURL
	}
	if err := live.AwaitGuard("report", s, checkpoint.Parse(s.Issue.Body, checkpoint.Options{Issue: n, MaxBytes: cfg.MaxCheckpointBytes})); err != nil {
		return nil, err
	}
	opts := handoff.Options{HistoryTail: cfg.HistoryTail, MaxBytes: cfg.MaxCheckpointBytes, Hint: s.Hint(cfg.RecentWindow()).At}
	out, err := handoff.Apply(n, s.Issue.Body, s.Issue.LabelNames(), rep, opts)
	if err != nil {
		return nil, w.applyError(n, err)
	}
	step.out = out
	res.Before, res.After = out.Before, out.After
	if handoff.HasInvocation(checkpointOf(s.Issue.Body, n), rep.Invocation) {
		step.already = true
		res.Outcome = "already-reported"
		res.After = out.Before
		res.Notes = append(res.Notes, fmt.Sprintf("invocation %s was reported before (the checkpoint records it; %s): nothing is written twice",
			rep.Invocation, step.ownWhere()))
		return step, nil
	}
	step.comment = handoff.Comment(rep, out)
	if w.Attest != nil {
		step.comment = w.Attest(n, rep, step.comment)
	}
	if step.judgement, err = w.judge(ctx, s, step, now, rep); err != nil {
		return nil, err
	}
	return step, nil
}

// applyError says why the report could not be applied to the body. An
// unreadable checkpoint keeps its *handoff.UnreadableError in the chain,
// so the caller can show its findings.
func (w *reporter) applyError(n int64, err error) error {
	var ue *handoff.UnreadableError
	if errors.As(err, &ue) {
		return &exitcode.ViolationError{Err: fmt.Errorf("report: issue #%d: %w; nothing was written. "+
			"Run 'gns-guard recover --repo %s --issue %d' to rebuild the checkpoint", n, err, w.Reader.Where.Repo, n)}
	}
	var oe *handoff.OverflowError
	if errors.As(err, &oe) {
		return &exitcode.UsageError{Err: fmt.Errorf("report: --consumed %d: issue #%d: %v; nothing was written", w.req.Report.Consumed, n, err)}
	}
	return &exitcode.CannotRunError{Err: fmt.Errorf("report: issue #%d: %w", n, err)}
}

// ownTime is the earlier comment's time, else at.
func ownTime(own *issues.Comment, at time.Time) time.Time {
	if ft, ok := handoff.ParseFooter(own.Body); ok {
		if t, err := time.Parse(time.RFC3339, ft.Timestamp); err == nil {
			return t
		}
	}
	return at
}

// ownWhere says where the invocation's earlier comment is.
func (st *reportStep) ownWhere() string {
	if st.own == nil {
		return "its comment is not among the last comments"
	}
	return fmt.Sprintf("comment %d", st.own.ID)
}

// judge decides the guard's run before the report and the runs after it
// (handoff.Predict: the run on the state the report leaves, and the runs
// after the guard's own writes), and fills the result with it.
func (w *reporter) judge(ctx context.Context, s *live.Snapshot, step *reportStep, now time.Time, rep handoff.Report) (handoff.Judgement, error) {
	var ownID int64
	if step.own != nil {
		ownID = step.own.ID
	}
	in := s.Input(w.Config, issues.Event{}, w.Reader.Where.Repo, now, w.Counter)
	in.Config.LedgerStandIn = standIn()
	judgement, err := handoff.Judge(in, step.out, step.comment, ownID, w.Self, now, func(in guard.Input) (*guard.Plan, error) {
		p, _, err := w.Reader.Decide(ctx, in)
		return p, err
	})
	if err != nil {
		return handoff.Judgement{}, err
	}
	res := w.res
	res.NextAgent, res.NextEstimate = rep.NextAgent, rep.NextEstimate
	res.Assignee, res.CurrentTask = rep.Assignee, rep.CurrentTask
	for _, viol := range judgement.Plan.Violations {
		res.Findings = append(res.Findings, viol.Finding)
	}
	res.AlreadyFailing = judgement.Already
	if judgement.Refused() && judgement.Run > 1 {
		res.Notes = append(res.Notes, fmt.Sprintf("the guard's run on this report passes, but its run number %d, "+
			"after the guard's own writes (its prune, digest or status comment moved to the end), fails", judgement.Run))
	}
	if judgement.Refused() && w.req.Force {
		res.Notes = append(res.Notes, "--force: written although the guard will fail the run it causes")
	}
	return judgement, nil
}

// standIn is a key drawn for one prediction of the guard's runs. They
// sign with ledger-key, which a writer does not hold; the predicted runs
// sign with this one instead (config.Config.LedgerStandIn), so a record
// one writes verifies on the next. It never leaves the process.
func standIn() []byte {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	return key
}

// refuseSecrets: exit 1 when any write carries a secret
// (docs/ledger.md#no-secret-in-a-write).
func (w *reporter) refuseSecrets(step *reportStep) error {
	held := secrets.New(w.req.Held...)
	if held.Len() == 0 || step.out == nil {
		return nil
	}
	texts := []struct{ where, text string }{
		{"the result comment", step.comment}, {"the issue body", step.out.Body}, {"a label", strings.Join(step.out.Add, "\n")},
	}
	if a := w.req.Report.Assignee; a != nil {
		texts = append(texts, struct{ where, text string }{"the assignee", *a})
	}
	for _, t := range texts {
		if f, ok := held.Find(t.text); ok {
			return &exitcode.ViolationError{Err: fmt.Errorf("report: issue #%d: refused, nothing was written: %s would hold %s, "+
				"a secret this process holds (the --result-file, --action or another text given carries it); remove it and report again",
				w.req.Issue, t.where, f)}
		}
	}
	return nil
}

// checkpointOf parses a body's checkpoint, or nil.
func checkpointOf(body string, n int64) *checkpoint.Checkpoint {
	r := checkpoint.Parse(body, checkpoint.Options{Issue: n, MaxBytes: len(body) + 1})
	if !r.Valid() {
		return nil
	}
	return r.Checkpoint
}

// findOwn finds the token user's comment naming this agent and invocation.
func findOwn(cs []issues.Comment, self, agent, invocation string) *issues.Comment {
	for i := len(cs) - 1; i >= 0; i-- {
		c := cs[i]
		if c.Author != self {
			continue
		}
		if ft, ok := handoff.ParseFooter(c.Body); ok && ft.Agent == agent && ft.Invocation == invocation {
			return &cs[i]
		}
	}
	return nil
}

// nonNilList makes JSON show [] rather than null.
func nonNilList(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
