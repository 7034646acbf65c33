package cli

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/handoff"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/issuetx"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// reportOptions are the parsed flags of `report`.
type reportOptions struct {
	issueFlags
	rep         handoff.Report
	depth       int64
	assignee    string
	currentTask string
	resultFile  string
	// labelsAdd and labelsRemove are the flags' lists, comma-separated.
	labelsAdd, labelsRemove string
	dryRun                  bool
	force                   bool
	format                  string
}

// reportResult is what `report` did, printed as text or JSON.
type reportResult struct {
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
	Before         handoff.Budget    `json:"budget_before"`
	After          handoff.Budget    `json:"budget_after"`
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

// reportFlags declares the flags of `report`.
func reportFlags(fs *flag.FlagSet) options {
	o := &reportOptions{}
	o.issueFlags.add(fs)
	r := &o.rep
	fs.StringVar(&r.Agent, "agent", "", "the agent's `NAME` (the header's {agent}; no spaces)")
	fs.StringVar(&r.Invocation, "invocation", "", "this invocation's `ID`: a re-run with the same id writes nothing twice")
	fs.Int64Var(&r.Consumed, "consumed", -1, "the `TOKENS` this invocation used")
	fs.StringVar(&r.Action, "action", "", "what the agent did, as `TEXT` (the first line becomes the history entry)")
	fs.StringVar(&r.Status, "status", "ok", "how the invocation ended: `ok|failed`")
	fs.StringVar(&r.Verdict, "verdict", "", "the agent's verdict, as `TEXT` (default: the status)")
	fs.Int64Var(&r.FilesChanged, "files-changed", 0, "how many files the agent changed")
	fs.StringVar(&r.KeyStats, "key-stats", "", "key figures: `TEXT`, or a JSON object")
	fs.StringVar(&r.NextAgent, "next-agent", "", "the agent to run next, its `NAME` (with --next-estimate; none: the workflow is done)")
	fs.Int64Var(&r.NextEstimate, "next-estimate", -1, "the next agent's estimated `TOKENS`")
	fs.StringVar(&o.resultFile, "result-file", "", "a `FILE` whose content is the comment's Result section (JSON shown as JSON)")
	fs.StringVar(&r.Phase, "phase", "", "move the checkpoint to this `PHASE` (default: keep it)")
	fs.Int64Var(&o.depth, "depth", -1, "move the checkpoint to this depth (default: keep it)")
	fs.StringVar(&o.labelsAdd, "labels-add", "", "labels to add, comma-separated: `L1,L2`")
	fs.StringVar(&o.labelsRemove, "labels-remove", "", "labels to remove, comma-separated: `L1,L2`")
	fs.StringVar(&o.assignee, "assignee", "", "hand the issue to this user, by `LOGIN`: state.assignee and the issue's assignee (default: state.assignee becomes --next-agent)")
	fs.StringVar(&o.currentTask, "current-task", "", "set current_task to `TEXT`: the task the next agent takes up")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print what would be written and write nothing")
	fs.BoolVar(&o.force, "force", false, "write even when the guard would fail the new state (the guard then fails the run)")
	fs.StringVar(&o.format, "format", "text", "output format: `text|json`")
	return o
}

func (o *reportOptions) validate(fs *flag.FlagSet, pos []string, env Env) error {
	if err := noPositional("report", pos); err != nil {
		return err
	}
	given := givenFlags(fs)
	if err := o.checkDone(); err != nil {
		return err
	}
	if err := o.checkNext(given); err != nil {
		return err
	}
	o.fillReport(given)
	if err := o.checkLabels(); err != nil {
		return err
	}
	if o.resultFile == "" {
		return nil
	}
	text, err := readText(env, "report", "result file", o.resultFile, maxResultBytes)
	if err != nil {
		return err
	}
	o.rep.Result = text
	return nil
}

// checkDone checks what the agent says it did: who, which invocation,
// how many tokens, what, and how it ended.
func (o *reportOptions) checkDone() error {
	r := &o.rep
	switch {
	case r.Agent == "":
		return usageError("report: --agent NAME is required")
	case !handoff.ValidName(r.Agent):
		return usageError("report: --agent %q: an agent's name has no spaces or | (it stands in the comment's header)", r.Agent)
	case r.Consumed < 0:
		return usageError("report: --consumed TOKENS (a whole number >= 0) is required")
	case strings.TrimSpace(r.Action) == "":
		return usageError("report: --action TEXT is required: it says what the agent did")
	case r.Status != "ok" && r.Status != "failed":
		return usageError("report: --status must be ok or failed, not %q", r.Status)
	case r.FilesChanged < 0:
		return usageError("report: --files-changed must be >= 0")
	}
	return nil
}

// checkNext checks what comes next: the next agent, the phase and depth,
// and the format.
func (o *reportOptions) checkNext(given map[string]bool) error {
	r := &o.rep
	switch {
	case given["next-agent"] != given["next-estimate"]:
		return usageError("report: --next-agent and --next-estimate go together (neither: the workflow is done)")
	case given["next-estimate"] && r.NextEstimate < 0:
		return usageError("report: --next-estimate must be >= 0")
	case r.NextAgent != "" && !handoff.ValidName(r.NextAgent):
		return usageError("report: --next-agent %q: an agent's name has no spaces or |", r.NextAgent)
	case r.Phase != "" && !handoff.ValidName(r.Phase):
		return usageError("report: --phase %q: a phase has no spaces or | (it stands in the comment's header)", r.Phase)
	case given["depth"] && (o.depth < 0 || o.depth > maxDepthFlag):
		return usageError("report: --depth must be a whole number from 0 to %d, not %d", maxDepthFlag, o.depth)
	case o.format != "text" && o.format != "json":
		return usageError("report: --format must be text or json, not %q", o.format)
	case given["current-task"] && strings.TrimSpace(o.currentTask) == "":
		return usageError("report: --current-task must say the task the next agent takes up")
	}
	return nil
}

// maxDepthFlag bounds report's --depth: agent_chain holds an agent per
// level, and a checkpoint (64 KiB by default) could not hold more.
const maxDepthFlag = 10000

// fillReport puts into the report what the flags given imply: no next
// estimate, a new depth, an assignee, the label changes.
func (o *reportOptions) fillReport(given map[string]bool) {
	r := &o.rep
	if !given["next-estimate"] {
		r.NextEstimate = 0
	}
	if given["depth"] {
		r.Depth = &o.depth
	}
	if given["assignee"] {
		a := o.assignee
		r.Assignee = &a
	}
	if given["current-task"] {
		task := strings.TrimSpace(o.currentTask)
		r.CurrentTask = &task
	}
	r.LabelsAdd, r.LabelsRemove = config.ParseList(o.labelsAdd), config.ParseList(o.labelsRemove)
}

// checkLabels refuses a label both added and removed.
func (o *reportOptions) checkLabels() error {
	for _, l := range o.rep.LabelsAdd {
		if slices.Contains(o.rep.LabelsRemove, l) {
			return usageError("report: label %q is both added and removed", l)
		}
	}
	return nil
}

// runReport performs the agents' exit protocol (see docs/agents.md, "For agent
// authors"): read the issue through the one reader, decide the report's
// effect and the guard's judgement of it, write, print.
func runReport(ctx context.Context, o *reportOptions, env Env) error {
	conn, err := o.connect(ctx, env)
	if err != nil {
		return err
	}
	res := &reportResult{Issue: o.issue, Agent: o.rep.Agent, Findings: []finding.Finding{}, LabelsAdded: []string{}, LabelsRemoved: []string{}}
	if err := o.openInvocation(ctx, conn, env, res); err != nil {
		return err
	}
	res.Invocation = o.rep.Invocation
	if err := o.fetchReceipt(ctx, conn, env, res); err != nil {
		return err
	}
	now := env.Now().UTC().Truncate(time.Second)
	printed := false
	err = issuetx.Run(ctx, func(ctx context.Context, a issuetx.Attempt) error {
		res.Attempts = a.N
		s, step, err := o.readAndDecide(ctx, env, conn, now, res)
		if err != nil {
			return err
		}
		if err := refuseSecrets(o, env, step); err != nil && !step.already {
			return err
		}
		if !step.writes(o) {
			printed = true
			return o.finishUnwritten(ctx, env, conn, s, step, res)
		}
		return o.write(ctx, conn, s, step, res)
	}, func(next issuetx.Attempt, _ error) {
		res.Notes = append(res.Notes, fmt.Sprintf("the body changed while the report was written (HTTP 409); read again and applied the same report to it (attempt %d)", next.N))
	})
	if err != nil || printed {
		return err
	}
	return printReport(env, o, res, nil)
}

// reportConn is what `report` works through on every attempt: the one
// reader, the client it writes with, the configuration the guard judges
// with, and the token's user.
type reportConn struct {
	reader  *live.Reader
	client  port.Forge
	cfg     config.Config
	counter *tokens.Counter
	self    string
}

// connect checks the flags, connects, resolves the configuration and
// looks up the token's user.
func (o *reportOptions) connect(ctx context.Context, env Env) (*reportConn, error) {
	reader, client, err := o.open("report", env)
	if err != nil {
		return nil, err
	}
	set, err := o.resolve(ctx, "report", env, reader)
	if err != nil {
		return nil, err
	}
	counter, err := tokens.New(set.Config.Encoding)
	if err != nil {
		return nil, cannotRun(err)
	}
	self, err := client.Self(ctx)
	if err != nil {
		return nil, reader.Where.Error("look up the token's user", err)
	}
	return &reportConn{reader: reader, client: client, cfg: set.Config, counter: counter, self: self}, nil
}

// readAndDecide reads the issue and decides the report on it. A
// checkpoint that cannot be read has its findings printed on standard
// error.
func (o *reportOptions) readAndDecide(ctx context.Context, env Env, conn *reportConn, now time.Time, res *reportResult) (*live.Snapshot, *reportStep, error) {
	s, err := conn.reader.Read(ctx, o.issue, live.ReadOptions{Window: conn.cfg.RecentWindow(), Ungoverned: true})
	if err != nil {
		return nil, nil, err
	}
	step, err := o.decide(ctx, conn, s, now, res)
	if err == nil && !step.already {
		// An earlier report of this invocation is answered as it was.
		if err := refuseUnjudged(ctx, "report", conn.reader, s, conn.cfg, env); err != nil {
			return nil, nil, err
		}
	}
	var ue *handoff.UnreadableError
	if errors.As(err, &ue) {
		for _, fd := range ue.Findings {
			fmt.Fprintln(env.Stderr, fd.Format(fmt.Sprintf("issue#%d", o.issue)))
		}
	}
	return s, step, err
}

// writes says the report is to be written: not reported before, not
// refused (unless --force), not a dry run.
func (st *reportStep) writes(o *reportOptions) bool {
	return !st.already && !(st.judgement.Refused() && !o.force) && !o.dryRun
}

// finishUnwritten ends a report that writes nothing: one reported
// before (whose labels are made right), refused, or a dry run.
func (o *reportOptions) finishUnwritten(ctx context.Context, env Env, conn *reportConn, s *live.Snapshot, step *reportStep, res *reportResult) error {
	switch {
	case step.already:
		if !o.dryRun {
			if err := applyLabels(ctx, conn.client, s.Issue, step.out, o.rep, res); err != nil {
				return conn.reader.Where.Error("update the labels", err)
			}
		}
		return printReport(env, o, res, nil)
	case step.judgement.Refused() && !o.force:
		res.Outcome = "refused"
		return printReport(env, o, res, errRefused)
	}
	res.Outcome = "dry-run"
	res.Comment, res.Body = step.comment, step.out.Body
	res.LabelsAdded, res.LabelsRemoved = nonNilList(step.out.Add), nonNilList(step.out.Remove)
	return printReport(env, o, res, nil)
}

// reportStep is what `report` decides on the issue as read.
type reportStep struct {
	out       *handoff.Outcome
	own       *issues.Comment // this invocation's comment, posted by an earlier run
	comment   string
	already   bool // the checkpoint records the invocation: nothing is written twice
	judgement handoff.Judgement
}

// decide computes the report on the issue as read (handoff.Apply) and
// the guard's judgement of the state it leaves, decided as the guard's run
// decides (the one reader's loop), and fills res with what it found.
func (o *reportOptions) decide(ctx context.Context, conn *reportConn, s *live.Snapshot, now time.Time, res *reportResult) (*reportStep, error) {
	n := s.Issue.Number
	rep := o.rep
	rep.Now = now
	step := &reportStep{own: findOwn(s.Comments(), conn.self, rep.Agent, rep.Invocation)}
	if step.own != nil {
		// A re-run: the entry keeps the time the comment states.
		rep.Now = ownTime(step.own, rep.Now)
		res.CommentID, res.CommentURL = step.own.ID, step.own.HTMLURL
	}
	if err := awaitGuard("report", s, checkpoint.Parse(s.Issue.Body, checkpoint.Options{Issue: n, MaxBytes: conn.cfg.MaxCheckpointBytes})); err != nil {
		return nil, err
	}
	out, err := handoff.Apply(n, s.Issue.Body, s.Issue.LabelNames(), rep, handoff.Options{HistoryTail: conn.cfg.HistoryTail, MaxBytes: conn.cfg.MaxCheckpointBytes, Hint: s.Hint(conn.cfg.RecentWindow()).At})
	var ue *handoff.UnreadableError
	if errors.As(err, &ue) {
		return nil, &exitcode.ViolationError{Err: fmt.Errorf("report: issue #%d: %w; nothing was written. Run 'gns-guard recover --repo %s --issue %d' to rebuild the checkpoint", n, err, o.repo, n)}
	}
	var oe *handoff.OverflowError
	if errors.As(err, &oe) {
		return nil, usageError("report: --consumed %d: issue #%d: %v; nothing was written", o.rep.Consumed, n, err)
	}
	if err != nil {
		return nil, cannotRun(fmt.Errorf("report: issue #%d: %w", n, err))
	}
	step.out = out
	res.Before, res.After = out.Before, out.After
	if handoff.HasInvocation(checkpointOf(s.Issue.Body, n), rep.Invocation) {
		step.already = true
		res.Outcome = "already-reported"
		res.After = out.Before
		res.Notes = append(res.Notes, fmt.Sprintf("invocation %s was reported before (the checkpoint records it; %s): nothing is written twice", rep.Invocation, step.ownWhere()))
		return step, nil
	}
	step.comment = handoff.Comment(rep, out)
	if step.judgement, err = o.judge(ctx, conn, s, step, now, rep, res); err != nil {
		return nil, err
	}
	return step, nil
}

// ownTime is the time this invocation's earlier comment states, else at.
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
// (handoff.Predict: the run on the state the report leaves, and the
// runs after the guard's own writes), and fills res with the judgement.
func (o *reportOptions) judge(ctx context.Context, conn *reportConn, s *live.Snapshot, step *reportStep, now time.Time, rep handoff.Report, res *reportResult) (handoff.Judgement, error) {
	var ownID int64
	if step.own != nil {
		ownID = step.own.ID
	}
	in := s.Input(conn.cfg, issues.Event{}, o.repo, now, conn.counter)
	in.Config.LedgerStandIn = standIn()
	judgement, err := handoff.Judge(in, step.out, step.comment, ownID, conn.self, now, func(in guard.Input) (*guard.Plan, error) {
		p, _, err := conn.reader.Decide(ctx, in)
		return p, err
	})
	if err != nil {
		return handoff.Judgement{}, err
	}
	res.NextAgent, res.NextEstimate = rep.NextAgent, rep.NextEstimate
	res.Assignee, res.CurrentTask = rep.Assignee, rep.CurrentTask
	for _, viol := range judgement.Plan.Violations {
		res.Findings = append(res.Findings, viol.Finding)
	}
	res.AlreadyFailing = judgement.Already
	if judgement.Refused() && judgement.Run > 1 {
		res.Notes = append(res.Notes, fmt.Sprintf("the guard's run on this report passes, but its run number %d, after the guard's own writes (its prune, digest or status comment moved to the end), fails", judgement.Run))
	}
	if judgement.Refused() && o.force {
		res.Notes = append(res.Notes, "--force: written although the guard will fail the run it causes")
	}
	return judgement, nil
}

// standIn is a key drawn for one prediction of the guard's runs: they
// sign what they write with ledger-key, which report does not hold; where
// a published ledger-public-key verifies the guard's records, the
// predicted runs sign with this one in its place
// (config.Config.LedgerStandIn), so that a record a predicted run writes
// verifies on the next. It never leaves the process.
func standIn() []byte {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	return key
}

// write posts (or updates) the result comment, patches the checkpoint
// compare-and-swap, and makes the label and assignee changes. A conflict
// is returned as is: the caller reads again.
func (o *reportOptions) write(ctx context.Context, conn *reportConn, s *live.Snapshot, step *reportStep, res *reportResult) error {
	if err := o.writeComment(ctx, conn, s.Issue.Number, step, res); err != nil {
		return err
	}
	cv, err := conn.client.EditBody(ctx, s.Issue.Number, step.out.Body, s.Issue.ContentVersion)
	if errors.Is(err, issues.ErrConflict) {
		return err
	}
	if err != nil {
		return conn.reader.Where.Error("patch the checkpoint (compare-and-swap)", err)
	}
	res.Patched, res.ContentVersion, res.Outcome = true, cv, "written"
	if err := applyLabels(ctx, conn.client, s.Issue, step.out, o.rep, res); err != nil {
		return conn.reader.Where.Error("update the labels", err)
	}
	return nil
}

// writeComment posts the result comment, or updates the one an earlier
// run of the invocation posted when its figures moved.
func (o *reportOptions) writeComment(ctx context.Context, conn *reportConn, n int64, step *reportStep, res *reportResult) error {
	switch {
	case step.own == nil:
		c, err := conn.client.CreateComment(ctx, n, step.comment)
		if err != nil {
			return conn.reader.Where.Error("post the result comment", err)
		}
		res.CommentID, res.CommentURL, res.CommentPosted = c.ID, c.HTMLURL, true
	case strings.TrimSpace(step.own.Body) != strings.TrimSpace(step.comment):
		// The budget moved since the comment was posted: it states the
		// figures the body gets.
		if _, err := conn.client.EditComment(ctx, step.own.ID, step.comment); err != nil {
			return conn.reader.Where.Error("update the result comment", err)
		}
		res.Notes = append(res.Notes, fmt.Sprintf("comment %d was posted by an earlier run of this invocation; its figures were updated", step.own.ID))
	default:
		res.Notes = append(res.Notes, fmt.Sprintf("comment %d was posted by an earlier run of this invocation; the checkpoint is patched now", step.own.ID))
	}
	return nil
}

// nonNilList is list, or an empty one: JSON shows [] rather than null.
func nonNilList(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// errRefused says the report was refused: exit 1, already explained.
var errRefused = &exitcode.Reported{Err: exitcode.ErrViolations}

// checkpointOf parses a body's checkpoint, or nil.
func checkpointOf(body string, n int64) *checkpoint.Checkpoint {
	r := checkpoint.Parse(body, checkpoint.Options{Issue: n, MaxBytes: len(body) + 1})
	if !r.Valid() {
		return nil
	}
	return r.Checkpoint
}

// findOwn finds this invocation's result comment: written by the token's
// user, an agent comment whose footer names the agent and the invocation.
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

// applyLabels makes the label and assignee changes the issue still needs.
// A refused assignee is a note, not a failure: state.assignee holds it.
func applyLabels(ctx context.Context, f port.IssueWriter, iss issues.Issue, out *handoff.Outcome, rep handoff.Report, res *reportResult) error {
	if len(out.Add) > 0 {
		if err := f.AddLabels(ctx, iss.Number, out.Add, nil); err != nil {
			return err
		}
	}
	for _, name := range out.Remove {
		for _, l := range iss.Labels {
			if l.Name == name {
				if err := f.RemoveLabel(ctx, iss.Number, l); err != nil && !errors.Is(err, issues.ErrNotFound) {
					return err
				}
			}
		}
	}
	res.LabelsAdded, res.LabelsRemoved = nonNilList(out.Add), nonNilList(out.Remove)
	if rep.Assignee != nil {
		var logins []string
		if *rep.Assignee != "" {
			logins = []string{*rep.Assignee}
		}
		if err := f.SetAssignees(ctx, iss.Number, logins); err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("the issue's assignee could not be set to %q (%v); state.assignee holds it", *rep.Assignee, err))
		}
	}
	return nil
}

// printReport prints what `report` did; err is returned as is.
func printReport(env Env, o *reportOptions, res *reportResult, err error) error {
	if o.format == "json" {
		if jerr := printIndented(env, res); jerr != nil {
			return jerr
		}
		if err != nil {
			for _, f := range res.Findings {
				fmt.Fprintln(env.Stderr, f.Format(fmt.Sprintf("issue#%d", res.Issue)))
			}
		}
		return err
	}
	// Agents' text is in it: inside Gitea Actions it goes between
	// stop-commands markers.
	var b strings.Builder
	writeReportText(&b, res)
	printUntrusted(env, b.String())
	return err
}

// waiting says a refused report found only what failed the issue before
// it: the issue waits for a person, whatever the report says.
func waiting(res *reportResult) bool {
	for _, f := range res.Findings {
		if !slices.Contains(res.AlreadyFailing, f.Rule) {
			return false
		}
	}
	return len(res.Findings) > 0
}

func writeReportText(w io.Writer, res *reportResult) {
	n := res.Issue
	switch res.Outcome {
	case "refused":
		fmt.Fprintf(w, "gns-guard: report: issue #%d: refused, nothing was written: the guard would fail the state this report leaves:\n", n)
		for _, f := range res.Findings {
			fmt.Fprintln(w, f.Format(fmt.Sprintf("issue#%d", n)))
		}
		if len(res.AlreadyFailing) > 0 {
			fmt.Fprintf(w, "(already failing before this report: %s)\n", strings.Join(res.AlreadyFailing, ", "))
		}
		if waiting(res) {
			fmt.Fprintf(w, "The issue waits for a person before any report: the findings above name the step, and no report fixes it. --force writes it anyway and the guard fails the run.\n")
		} else {
			fmt.Fprintf(w, "Fix the report (a smaller --next-estimate, another --next-agent, ...) or ask a person; --force writes it anyway and the guard fails the run.\n")
		}
	case "dry-run":
		fmt.Fprintf(w, "gns-guard: report: issue #%d: dry run, nothing was written. The comment would be:\n\n%s\n", n, res.Comment)
	case "already-reported":
		fmt.Fprintf(w, "gns-guard: report: issue #%d: already reported; nothing written twice\n", n)
	default:
		if res.CommentPosted {
			fmt.Fprintf(w, "gns-guard: report: issue #%d: posted comment %d %s\n", n, res.CommentID, res.CommentURL)
		}
		fmt.Fprintf(w, "gns-guard: report: issue #%d: checkpoint patched (content version %d)\n", n, res.ContentVersion)
	}
	if res.Outcome != "refused" && res.Outcome != "already-reported" {
		fmt.Fprintf(w, "budget: total %d · consumed %d → %d · remaining %d → %d\n", res.After.Total, res.Before.Consumed, res.After.Consumed, res.Before.Remaining, res.After.Remaining)
		if res.NextAgent == "" {
			fmt.Fprintln(w, "next: none (the workflow is done)")
		} else {
			fmt.Fprintf(w, "next: %s, estimated %d tokens\n", res.NextAgent, res.NextEstimate)
		}
		if len(res.LabelsAdded)+len(res.LabelsRemoved) > 0 {
			fmt.Fprintf(w, "labels: +[%s] −[%s]\n", strings.Join(res.LabelsAdded, ", "), strings.Join(res.LabelsRemoved, ", "))
		}
		if res.Assignee != nil {
			fmt.Fprintf(w, "assignee: %s\n", *res.Assignee)
		}
		if res.CurrentTask != nil {
			fmt.Fprintf(w, "current task: %s\n", *res.CurrentTask)
		}
	}
	for _, note := range res.Notes {
		fmt.Fprintf(w, "note: %s\n", note)
	}
}
