package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/entryload"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/fence"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// dirExists reports whether a directory exists (for the default overflow
// log); tests replace it.
var dirExists = func(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// Defaults and limits of `context`.
const (
	// contextWindow is how many of the issue's last comments `context`
	// asks the timeline for: the 3 it loads plus room for the guard's own
	// comments (status, archive parts, digest, recovery) between them. One
	// read of the timeline's tail returns them, as it does for the guard.
	contextWindow = 8
	// defaultOverflowLog is where cost-check warnings go when its folder
	// exists and --overflow-log is not given.
	defaultOverflowLog = ".kilo/logs/context-overflow-warnings.jsonl"
	// costCheckRatio: warn when the planned load exceeds this share of the
	// available tokens (the protocol's cost check).
	costCheckRatio = 0.3
	// maxDocBytes bounds a file or skill: the largest cap (a large task's
	// 18,500 tokens) holds far less text.
	maxDocBytes = 1 << 20
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// contextOptions are the parsed flags of `context`.
type contextOptions struct {
	issueFlags
	body, comments string
	files          stringList
	skill          string
	size           string
	cap            int
	fullComments   bool
	format         string
	labels         string
	labelsSet      bool
	overflowLog    string
	overflowSet    bool
	metricsFile    string
}

// contextReport is the JSON form of `context`.
type contextReport struct {
	Fits bool `json:"fits"`
	*entryload.Load
	CurrentTask string          `json:"current_task"`
	CostCheck   *costCheck      `json:"cost_check,omitempty"`
	Next        *guard.Room     `json:"next_estimate,omitempty"`
	Error       string          `json:"error,omitempty"`
	OverCap     *overCapNumbers `json:"over_cap,omitempty"`
}

// costCheck is the protocol's check before loading: is the planned load
// over 30% of the available tokens?
type costCheck struct {
	Planned   int     `json:"planned_tokens"`
	Available int     `json:"available_tokens"`
	Threshold float64 `json:"threshold"`
	Ratio     float64 `json:"ratio"`
	Over      bool    `json:"over"`
}

type overCapNumbers struct {
	Issue      int64 `json:"issue"`
	Checkpoint int   `json:"checkpoint_tokens"`
	Task       int   `json:"task_tokens"`
	Minimal    int   `json:"minimal_tokens"`
	entryload.LoadCap
}

// nextRoom is the room the guard's figures leave the next call.
func nextRoom(nums guard.Numbers, cfg config.Config) *guard.Room {
	r := guard.RoomOf(nums, cfg)
	return &r
}

// contextMetrics is the action's context-budget record (docs/contract.md §7) with
// files_loaded, for the load this command printed.
type contextMetrics struct {
	TS                string  `json:"ts"`
	Agent             string  `json:"agent"`
	Issue             int64   `json:"issue"`
	ContextLoaded     int     `json:"context_loaded"`
	ContextAvailable  int     `json:"context_available"`
	ContextRatio      float64 `json:"context_ratio"`
	FilesLoaded       int     `json:"files_loaded"`
	CheckpointEntries int     `json:"checkpoint_entries"`
	Pruned            bool    `json:"pruned"`
}

// overflowRecord is one line of the overflow log.
type overflowRecord struct {
	TS             string   `json:"ts"`
	Agent          string   `json:"agent"`
	Issue          int64    `json:"issue"`
	Estimate       int      `json:"estimate"`
	Available      int      `json:"available"`
	Ratio          float64  `json:"ratio"`
	Threshold      float64  `json:"threshold"`
	Loaded         int      `json:"loaded"`
	FilesRequested int      `json:"files_requested"`
	FilesLoaded    int      `json:"files_loaded"`
	Dropped        []string `json:"dropped"`
	Cut            []string `json:"cut"`
}

// contextFlags declares the flags of `context`.
func contextFlags(fs *flag.FlagSet) options {
	o := &contextOptions{}
	o.issueFlags.add(fs)
	fs.StringVar(&o.body, "body", "", "read the issue body from `FILE` (- for standard input) instead of the server")
	fs.StringVar(&o.comments, "comments", "", "with --body: a `FILE` of the issue's comments, a JSON array of {id, author, body, html_url}, oldest first")
	fs.Var(&o.files, "file", "a file the task names, its `PATH` in the local checkout (repeatable, at most 3, in priority order)")
	fs.StringVar(&o.skill, "skill", "", "the skill to load, its `PATH` in the local checkout")
	fs.StringVar(&o.size, "size", "", "task size: `tiny|small|medium|large` (default: the size:: label, else inferred from next_estimated_tokens)")
	fs.IntVar(&o.cap, "cap", 0, "the cap in `TOKENS` (default: the task size's max context less its checkpoint overhead)")
	fs.BoolVar(&o.fullComments, "full-comments", false, "load the older agent results whole too (the previous agent's result is whole whenever it fits the cap)")
	fs.StringVar(&o.format, "format", "text", "output format: `text|json`")
	fs.StringVar(&o.labels, "labels", "", "with --body: the issue's labels, comma-separated (`L1,L2`); --labels= for none (default: the checkpoint's state.labels)")
	fs.StringVar(&o.overflowLog, "overflow-log", defaultOverflowLog, "append a JSON line to this `FILE` when the cost check warns (by default only if the folder exists; \"\" for nowhere)")
	fs.StringVar(&o.metricsFile, "metrics-file", "", "append the load's context-budget record (JSON line) to this `FILE`")
	return o
}

func (o *contextOptions) validate(fs *flag.FlagSet, pos []string, _ Env) error {
	given := givenFlags(fs)
	o.labelsSet, o.overflowSet = given["labels"], given["overflow-log"]
	if given["issue"] && o.issue < 1 {
		return usageError("context: --issue must be a positive issue number, not %d", o.issue)
	}
	if len(pos) > 0 {
		return usageError("context takes no positional arguments, got: %s (name files with --file PATH)", strings.Join(pos, " "))
	}
	if err := o.checkSource(); err != nil {
		return err
	}
	if err := o.checkLimits(); err != nil {
		return err
	}
	if err := o.checkFiles(); err != nil {
		return err
	}
	return o.checkRepo()
}

// checkSource checks that the flags name one issue: on the server, or
// offline.
func (o *contextOptions) checkSource() error {
	switch {
	case o.repo != "" && o.body != "":
		return usageError("context: give either --repo OWNER/NAME --issue N (read the server) or --body FILE (offline), not both")
	case o.repo == "" && o.body == "":
		return usageError("context: say which issue: --repo OWNER/NAME --issue N, or --body FILE [--comments FILE] offline")
	case o.comments != "" && o.body == "":
		return usageError("context: --comments goes with --body; with --repo the comments are read from the server")
	case o.labelsSet && o.body == "":
		return usageError("context: --labels goes with --body; with --repo the live labels are read")
	}
	return nil
}

// checkLimits checks the numbers and the format.
func (o *contextOptions) checkLimits() error {
	switch {
	case len(o.files) > entryload.MaxFiles:
		return usageError("context: %d files named with --file; an agent loads at most %d (the protocol's limit): name the %d the task needs most", len(o.files), entryload.MaxFiles, entryload.MaxFiles)
	case o.cap < 0:
		return usageError("context: --cap must be a positive number of tokens, not %d", o.cap)
	case o.format != "text" && o.format != "json":
		return usageError("context: --format must be text or json, not %q", o.format)
	case o.issue < 0:
		return usageError("context: --issue must be a positive issue number, not %d", o.issue)
	}
	return nil
}

// checkFiles refuses a file named twice and an unknown --size.
func (o *contextOptions) checkFiles() error {
	seen := map[string]bool{}
	for _, f := range o.files {
		if seen[filepath.Clean(f)] {
			return usageError("context: --file %s is named twice", f)
		}
		seen[filepath.Clean(f)] = true
	}
	if o.size != "" {
		if _, ok := issues.TaskSizeNamed(o.size); !ok {
			return usageError("context: --size must be tiny, small, medium or large, not %q", o.size)
		}
	}
	return nil
}

// checkRepo checks --repo and --issue, when the issue is read from the
// server.
func (o *contextOptions) checkRepo() error {
	if o.repo == "" {
		return nil
	}
	owner, name, ok := strings.Cut(o.repo, "/")
	switch {
	case !ok || owner == "" || name == "" || strings.Contains(name, "/"):
		return usageError("context: --repo must be OWNER/NAME, not %q", o.repo)
	case o.issue < 1:
		return usageError("context: --issue N (a positive issue number) is required with --repo")
	}
	return nil
}

// runContext prints what the next agent loads on entry, under a hard cap.
func runContext(ctx context.Context, o *contextOptions, env Env) error {
	// Local input first: a bad file is known before any request.
	files, skill, err := readDocs(env, o)
	if err != nil {
		return err
	}
	reader, s, cfg, err := readContextIssue(ctx, env, o)
	if err != nil {
		return err
	}
	counter, err := tokens.New(cfg.Encoding)
	if err != nil {
		return cannotRun(err)
	}
	parsed, err := contextCheckpoint(env, s, o)
	if err != nil {
		return err
	}
	if o.repo != "" {
		if err := refuseUnjudged(ctx, "context", reader, s.Snapshot, cfg, env); err != nil {
			return err
		}
	}
	plan, err := guardFigures(ctx, reader, s, cfg, o.repo, env, counter)
	if err != nil {
		return err
	}
	nums := plan.Numbers
	if err := acceptedTask(env, plan, s.Issue.Number); err != nil {
		return err
	}
	number, cp := s.Issue.Number, parsed.Checkpoint
	budget, err := entryBudget(env, o, nums, number)
	if err != nil {
		return err
	}
	in := entryInput(o, s, parsed, files, skill, budget, counter, plan)
	load, fence, err := assemble(env, o.format, in, counter)
	var oc *entryload.OverCapError
	if errors.As(err, &oc) {
		return overCap(env, o, oc, cp)
	}
	if err != nil {
		return cannotRun(fmt.Errorf("context: %w", err))
	}
	check := newCostCheck(load.Planned, budget.Cap)
	logLoad(env, o, loadLog{
		ts: env.Now().UTC().Format("2006-01-02T15:04:05Z"), number: number, load: load, budget: budget, check: check,
		filesRequested: len(files), entries: len(cp.Entries()),
	})
	return printContext(env, o.format, contextReport{Fits: true, Load: load, CurrentTask: cp.CurrentTask.Value, CostCheck: &check, Next: nextRoom(nums, cfg)}, fence)
}

// readDocs reads the --file files and the --skill, in that order.
func readDocs(env Env, o *contextOptions) ([]entryload.Doc, *entryload.Doc, error) {
	var files []entryload.Doc
	for _, p := range o.files {
		d, err := readDoc(env, "file", p)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, d)
	}
	if o.skill == "" {
		return files, nil, nil
	}
	skill, err := readDoc(env, "skill", o.skill)
	if err != nil {
		return nil, nil, err
	}
	return files, &skill, nil
}

// contextCheckpoint parses the issue's checkpoint and refuses one no agent
// should resume from. An issue read offline without --issue takes the
// checkpoint's number.
func contextCheckpoint(env Env, s contextIssue, o *contextOptions) (checkpoint.Result, error) {
	number := s.Issue.Number
	parsed := checkpoint.Parse(s.Issue.Body, checkpoint.Options{Issue: number})
	if err := awaitGuard("context", s.Snapshot, parsed); err != nil {
		return parsed, err
	}
	if err := loadableCheckpoint(env, s, parsed, number, o); err != nil {
		return parsed, err
	}
	if number == 0 {
		s.Issue.Number = parsed.Checkpoint.Issue.Value
	}
	return parsed, nil
}

// guardFigures is the guard's decision on the issue, decided as its run on
// an edit would: its figures, and who speaks on the issue.
func guardFigures(ctx context.Context, reader *live.Reader, s contextIssue, cfg config.Config, repo string, env Env, counter *tokens.Counter) (*guard.Plan, error) {
	number := s.Issue.Number
	in := s.Input(cfg, issues.Event{Name: "issues", Action: "edited", Number: number}, repo, env.Now(), counter)
	in.LabelsUnknown = !s.labelsKnown
	plan, _, err := reader.Decide(ctx, in)
	return plan, err
}

// acceptedTask refuses (exit 1) an issue whose task someone who may not
// changed since the guard accepted it, when the accepted task cannot be
// read back from the body's edit history; when it can, the load holds it
// in place of the body's and standard error says so
// (docs/ledger.md#the-task).
func acceptedTask(env Env, plan *guard.Plan, n int64) error {
	v := plan.Task
	if v == nil || !v.Changed {
		return nil
	}
	if v.Accepted == "" {
		return &exitcode.ViolationError{Err: fmt.Errorf("context: issue #%d: the task was changed since the guard accepted it, by %s, and the task as accepted is not in the body's edit history (Gitea shows it only on a public repository): an agent must not work from a task the person did not set; %s", n, v.Who(), v.Step())}
	}
	fmt.Fprintf(env.Stderr, "gns-guard: context: warning: issue #%d: the task was changed since the guard accepted it, by %s: the load holds the task as accepted, read from the body's edit history\n", n, oneLine(v.Who()))
	return nil
}

// entryBudget is the cap of the load: the task size's (--size, else the
// guard's), unless --cap gives one.
func entryBudget(env Env, o *contextOptions, nums guard.Numbers, number int64) (entryload.LoadCap, error) {
	size, ok := issues.TaskSizeNamed(nums.TaskSize)
	if o.size != "" {
		size, ok = issues.TaskSizeNamed(o.size)
	}
	if !ok {
		return entryload.LoadCap{}, cannotRun(fmt.Errorf("context: issue #%d: the guard reported no task size", number))
	}
	if o.size == "" && size.Inferred && nums.NextEstimated >= issues.TooLargeEstimate {
		fmt.Fprintf(env.Stderr, "gns-guard: context: warning: issue #%d: next_estimated_tokens %d is over the largest task size (< %s): the guard fails it as task-too-large; split the task\n", number, nums.NextEstimated, tokens.Format(issues.TooLargeEstimate))
	}
	budget := entryload.LoadCap{Cap: int(size.Available()), Size: size.Name, MaxContext: int(size.MaxContext), Overhead: int(size.Overhead)}
	if o.cap > 0 {
		budget.Cap, budget.Explicit = o.cap, true
	}
	return budget, nil
}

// entryInput is what the load is assembled from: the entry load the guard
// measures (entryload.Entry: the task, the checkpoint, the last comments
// that are not the guard's own and whose authors may speak), and the
// files and skill, under the budget.
func entryInput(o *contextOptions, s contextIssue, parsed checkpoint.Result, files []entryload.Doc, skill *entryload.Doc, budget entryload.LoadCap, counter *tokens.Counter, plan *guard.Plan) entryload.Input {
	nums := plan.Numbers
	in := entryload.Entry(entryload.Issue{Number: s.Issue.Number, Agent: nums.Agent, Body: s.Issue.Body, Checkpoint: parsed.Block().Text(), Recent: s.Recent.Comments, Guard: s.Guard, Authors: plan.Authors, Missing: plan.MissingResults()}, counter)
	if task, note := plan.EntryTask(); task != "" {
		in.Task, in.TaskNote = task, note
	}
	in.Files, in.Skill, in.FullComments, in.Budget = files, skill, o.fullComments, budget
	in.Guard = &entryload.GuardFigure{
		ContextTokens: nums.ContextTokens, EntryTokens: nums.EntryTokens, CheckpointTokens: nums.CheckpointTokens, CommentTokens: nums.CommentTokens,
		NextEstimated: nums.NextEstimated, TaskSize: nums.TaskSize, MaxContext: nums.MaxContext, ContextRatio: nums.ContextRatio,
	}
	return in
}

// assemble assembles the load. Inside Gitea Actions the text goes
// between stop-commands markers (no issue text may run a workflow
// command); they count against the cap, and the fence is returned.
func assemble(env Env, format string, in entryload.Input, counter *tokens.Counter) (*entryload.Load, *fence.Fence, error) {
	if format != "text" || env.Getenv("GITHUB_ACTIONS") != "true" {
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

// newCostCheck is the protocol's cost check of a planned load against the
// tokens available.
func newCostCheck(planned, available int) costCheck {
	return costCheck{
		Planned:   planned,
		Available: available,
		Threshold: costCheckRatio,
		Ratio:     math.Round(float64(planned)/float64(available)*10000) / 10000,
		Over:      float64(planned) > costCheckRatio*float64(available),
	}
}

// loadLog is what `context` logs of a load.
type loadLog struct {
	ts             string // the time of the load, RFC 3339 in UTC
	number         int64
	load           *entryload.Load
	budget         entryload.LoadCap
	check          costCheck
	filesRequested int
	entries        int // the checkpoint's history entries
}

// filesLoaded counts the files the load holds, whole or cut.
func (l loadLog) filesLoaded() int {
	n := 0
	for _, s := range l.load.Sections {
		if s.Kind == entryload.KindFile && s.Status != entryload.Dropped {
			n++
		}
	}
	return n
}

// logLoad warns when the cost check is over, logging it to the overflow
// log, and appends the load's record to --metrics-file.
func logLoad(env Env, o *contextOptions, l loadLog) {
	if l.check.Over {
		warnCostCheck(env, overflowLogPath(o), l)
	}
	if o.metricsFile != "" {
		appendJSONLine(env, "--metrics-file", o.metricsFile, l.metrics())
	}
}

// warnCostCheck says the planned load is over the cost check's share of
// the cap, and logs it to logTo unless that is "".
func warnCostCheck(env Env, logTo string, l loadLog) {
	load, capTokens := l.load, l.budget.Cap
	where := "pass --overflow-log FILE to log it"
	if logTo != "" {
		where = "logged to " + logTo
	}
	fmt.Fprintf(env.Stderr, "gns-guard: context: warning: issue #%d: the planned load takes %s tokens, over %.0f%% of the %s available (%s): load fewer files or ask for a slimmer task; %s\n",
		l.number, tokens.Format(load.Planned), costCheckRatio*100, tokens.Format(capTokens), tokens.Format(int(costCheckRatio*float64(capTokens))), where)
	if logTo == "" {
		return
	}
	rec := overflowRecord{TS: l.ts, Agent: load.Agent, Issue: l.number, Estimate: load.Planned, Available: capTokens, Ratio: l.check.Ratio,
		Threshold: costCheckRatio, Loaded: load.Tokens, FilesRequested: l.filesRequested, FilesLoaded: l.filesLoaded(), Dropped: load.Dropped, Cut: load.Cut}
	appendJSONLine(env, "--overflow-log", logTo, rec)
}

// metrics is the load's context-budget record.
func (l loadLog) metrics() contextMetrics {
	load, maxContext := l.load, l.budget.MaxContext
	m := contextMetrics{TS: l.ts, Agent: load.Agent, Issue: l.number, ContextLoaded: load.Tokens, ContextAvailable: maxContext,
		FilesLoaded: l.filesLoaded(), CheckpointEntries: l.entries, Pruned: len(load.Dropped)+len(load.Cut) > 0}
	if maxContext > 0 {
		m.ContextRatio = math.Round(float64(load.Tokens)/float64(maxContext)*10000) / 10000
	}
	return m
}

// printContext prints the load: its JSON report, or its text (between
// the fence's markers, when there is one).
func printContext(env Env, format string, rep contextReport, fence *fence.Fence) error {
	if format == "json" {
		return printIndented(env, rep)
	}
	if fence != nil {
		fmt.Fprint(env.Stdout, fence.Open()+rep.Text+fence.Close())
		return nil
	}
	fmt.Fprint(env.Stdout, rep.Text)
	return nil
}

// readDoc reads a file or skill from the local checkout and refuses what
// cannot be loaded as text.
func readDoc(env Env, what, path string) (entryload.Doc, error) {
	data, err := env.ReadFile(path)
	if err != nil {
		return entryload.Doc{}, usageError("context: cannot read the %s %s: %v", what, path, unwrapPath(err))
	}
	if len(data) > maxDocBytes {
		return entryload.Doc{}, usageError("context: the %s %s is %s bytes, over the %s a load reads (the largest cap, a large task's 18,500 tokens, holds about 70 KB): name a smaller file or the part the task needs",
			what, path, tokens.Format(len(data)), "1 MiB")
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		line := 1 + bytes.Count(data[:i], []byte("\n"))
		return entryload.Doc{}, notText("context: the %s %s looks binary (a NUL byte on line %d, byte offset %d): only text files can be loaded", what, path, line, i)
	}
	if err := validUTF8(data); err != nil {
		return entryload.Doc{}, notText("context: the %s %s is not UTF-8 text (%v): convert it to UTF-8 or leave it out", what, path, err)
	}
	return entryload.Doc{Path: path, Text: string(data)}, nil
}

// unwrapPath drops the repeated path from an *os.PathError.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// validUTF8 says where data stops being UTF-8.
func validUTF8(data []byte) error {
	if utf8.Valid(data) {
		return nil
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			line := 1 + bytes.Count(data[:i], []byte("\n"))
			return fmt.Errorf("invalid byte 0x%02x on line %d, byte offset %d", data[i], line, i)
		}
		i += n
	}
	return nil
}

// readIssueOffline reads --body and --comments.
func readIssueOffline(env Env, o *contextOptions) (iss issues.Issue, recent []issues.Comment, labelsKnown bool, err error) {
	body, err := readInput(env, o.body)
	if err != nil {
		return iss, nil, false, err
	}
	if err := validUTF8([]byte(body)); err != nil {
		return iss, nil, false, notText("context: the body %s is not UTF-8 text (%v)", o.body, err)
	}
	iss = issues.Issue{Number: o.issue, Body: body}
	if o.comments != "" {
		if recent, err = readCommentsFile(env, o.comments); err != nil {
			return iss, nil, false, err
		}
	}
	var labels []string
	labelsKnown = o.labelsSet // --labels= says the issue has none
	if o.labelsSet {
		labels = config.ParseList(o.labels)
	} else if cp := checkpoint.Parse(body, checkpoint.Options{}).Checkpoint; cp != nil {
		// Offline, the labels are the checkpoint's own record of them.
		for _, l := range cp.State.Labels.Items {
			labels = append(labels, l.Value)
		}
		labelsKnown = cp.State.Labels.Set
	}
	for i, l := range labels {
		iss.Labels = append(iss.Labels, issues.Label{ID: int64(i + 1), Name: l})
	}
	return iss, recent, labelsKnown, nil
}

// commentsFileEntry is one comment of a --comments file. author may be
// given as Gitea's user.login, so the API's own comment list works as is.
type commentsFileEntry struct {
	ID     int64  `json:"id"`
	Author string `json:"author"`
	User   *struct {
		Login string `json:"login"`
	} `json:"user"`
	Body    *string `json:"body"`
	HTMLURL string  `json:"html_url"`
}

// readCommentsFile reads a JSON array of comments, oldest first.
func readCommentsFile(env Env, name string) ([]issues.Comment, error) {
	text, err := readInput(env, name)
	if err != nil {
		return nil, err
	}
	data := []byte(text)
	if err := validUTF8(data); err != nil {
		return nil, notText("context: the comments file %s is not UTF-8 text (%v)", name, err)
	}
	var entries []commentsFileEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line, col := offsetLineCol(data, int(se.Offset))
			return nil, usageError("context: %s:%d:%d: not valid JSON: %v (expected an array of {id, author, body, html_url})", name, line, col, se)
		case errors.As(err, &te):
			line, col := offsetLineCol(data, int(te.Offset))
			if te.Field == "" {
				return nil, usageError("context: %s:%d:%d: expected a JSON array of {id, author, body, html_url}, found %s", name, line, col, jsonKind(te.Value))
			}
			return nil, usageError("context: %s:%d:%d: a comment's %s must be %s, found %s", name, line, col, te.Field, jsonWant(te.Field), jsonKind(te.Value))
		}
		return nil, usageError("context: %s: %v (expected an array of {id, author, body, html_url})", name, err)
	}
	out := make([]issues.Comment, 0, len(entries))
	for i, e := range entries {
		if e.Body == nil {
			return nil, usageError("context: %s: comment %d of %d (id %d) has no body", name, i+1, len(entries), e.ID)
		}
		author := e.Author
		if author == "" && e.User != nil {
			author = e.User.Login
		}
		out = append(out, issues.Comment{ID: e.ID, Author: author, Body: *e.Body, HTMLURL: e.HTMLURL})
	}
	return out, nil
}

// jsonKind names a JSON value kind as encoding/json reports it.
func jsonKind(v string) string {
	switch v {
	case "object", "array":
		return "an " + v
	case "string", "number", "bool":
		return "a " + strings.Replace(v, "bool", "boolean", 1)
	}
	return v
}

// jsonWant says what a field of the comments file holds.
func jsonWant(field string) string {
	switch field {
	case "id":
		return "a whole number"
	case "user":
		return "an object with a login"
	}
	return "a string"
}

func offsetLineCol(data []byte, off int) (int, int) {
	off = max(0, min(off, len(data)))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	return line, 1 + utf8.RuneCount(data[start:off])
}

// contextIssue is the issue `context` loads from, read from the server
// or from files.
type contextIssue struct {
	*live.Snapshot
	labelsKnown bool
}

// readContextIssue resolves the configuration and reads the issue: from
// the server through the one reader (the issue, the tail of its timeline,
// the repository's configuration file), or offline from --body and
// --comments with --config and the flags.
func readContextIssue(ctx context.Context, env Env, o *contextOptions) (*live.Reader, contextIssue, config.Config, error) {
	if o.repo == "" {
		iss, recent, known, err := readIssueOffline(env, o)
		if err != nil {
			return nil, contextIssue{}, config.Config{}, err
		}
		var layers []settings.Layer
		if o.config != "" {
			l, err := localConfig(env, o.config)
			if err != nil {
				return nil, contextIssue{}, config.Config{}, err
			}
			layers = append(layers, l)
		}
		set, err := settings.Resolve(append(layers, o.settings())...)
		if err != nil {
			return nil, contextIssue{}, config.Config{}, usageError("context: %v", err)
		}
		guardUser := firstOf(o.guardUser, issues.ActionsUser)
		s := &live.Snapshot{Issue: iss, Governed: true, Recent: issues.CommentPage{Comments: recent}, Guard: guardUser}
		return &live.Reader{}, contextIssue{s, known}, set.Config, nil
	}
	rd, _, err := o.open("context", env)
	if err != nil {
		return nil, contextIssue{}, config.Config{}, err
	}
	set, err := o.resolve(ctx, "context", env, rd)
	if err != nil {
		return nil, contextIssue{}, config.Config{}, err
	}
	s, err := rd.Read(ctx, o.issue, live.ReadOptions{Window: max(contextWindow, set.Config.RecentWindow()), Ungoverned: true, Shallow: true})
	if err != nil {
		return nil, contextIssue{}, config.Config{}, err
	}
	return rd, contextIssue{s, true}, set.Config, nil
}

// ungoverned says an issue read from the server is none the guard
// governs: no checkpoint, no governance label, no anchor, and no status
// comment among the comments read (one holds a ledger: the issue was
// governed, and its checkpoint is gone).
func ungoverned(s contextIssue, o *contextOptions) bool {
	return o.repo != "" && !s.Governed && s.Status == nil && !s.Unreached
}

// loadableCheckpoint refuses an issue no agent should resume from: no
// checkpoint block, or one that cannot be trusted (exit 1), or an issue
// the guard does not govern (exit 2).
func loadableCheckpoint(env Env, s contextIssue, parsed checkpoint.Result, number int64, o *contextOptions) error {
	where := fmt.Sprintf("issue #%d", number)
	if o.body != "" {
		where = o.body
	}
	if len(parsed.Blocks) == 0 && ungoverned(s, o) {
		// Not an issue the guard governs: a wrong --issue, or one not
		// opened from the template. Recovery cannot help (docs/choices.md).
		return usageError("context: %s is not governed by gns-guard: it has no checkpoint block, no cascade:: or budget:: label and no status comment of the guard; check --issue, or open the task from the %q issue template", where, issueTemplateName)
	}
	if len(parsed.Blocks) == 0 {
		return &exitcode.ViolationError{Err: fmt.Errorf("context: %s has no checkpoint block (a ```yaml fenced block whose root key is checkpoint): there is no state for an agent to load; run 'gns-guard schema' for its shape", where)}
	}
	if parsed.Valid() {
		return nil
	}
	prefix := where
	if o.body == "" {
		prefix = fmt.Sprintf("issue#%d", number)
	}
	for _, f := range parsed.Findings {
		fmt.Fprintln(env.Stderr, f.Format(prefix))
	}
	return &exitcode.ViolationError{Err: fmt.Errorf("context: the checkpoint of %s cannot be trusted (see above): an agent must not resume from it; fix the body (check it with 'gns-guard check') or ask for recovery with a '## 🔄 context-recovery-needed' comment", where)}
}

// overCap reports a checkpoint that alone does not fit: exit 1.
func overCap(env Env, o *contextOptions, oc *entryload.OverCapError, cp *checkpoint.Checkpoint) error {
	var how []string
	n := len(cp.Entries())
	if n > checkpoint.DefaultTailLimit || cp.History.Set {
		how = append(how, fmt.Sprintf("move its %d history entries into archive comments, keeping the last %d in history_tail (the guard does so on its next run when the checkpoint is over the task's overhead of %s tokens or 80%% of the budget is used; 'gns-guard prune BODY' prints the result)",
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
	if o.format == "json" {
		rep := contextReport{Fits: false, CurrentTask: cp.CurrentTask.Value, Error: msg,
			OverCap: &overCapNumbers{Issue: oc.Issue, Checkpoint: oc.Checkpoint, Task: oc.Task, Minimal: oc.Minimal + oc.Reserve, LoadCap: oc.Budget}}
		_ = printIndented(env, rep) // the error below is the answer either way
	}
	return &exitcode.ViolationError{Err: errors.New("context: " + msg)}
}

// overflowLogPath is where a cost-check warning is logged, or "".
func overflowLogPath(o *contextOptions) string {
	if o.overflowSet {
		return o.overflowLog
	}
	if dirExists(filepath.Dir(defaultOverflowLog)) {
		return defaultOverflowLog
	}
	return ""
}

// appendJSONLine appends v as one JSON line; a failure is a warning.
func appendJSONLine(env Env, flagName, path string, v any) {
	data, err := json.Marshal(v)
	if err == nil {
		err = env.AppendFile(path, append(data, '\n'))
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "gns-guard: context: warning: cannot append to %s %s: %v\n", flagName, path, err)
	}
}

// awaitGuard refuses, for now, a body that still holds the issue
// template's placeholder issue: 0 while the guard has not run on the issue
// (it has no status comment): its first run sets the number, and the verb
// works once it has. Exit 3, as for anything to try again later.
func awaitGuard(verb string, s *live.Snapshot, parsed checkpoint.Result) error {
	n := s.Issue.Number
	if n == 0 || s.Status != nil || !parsed.HoldsPlaceholder() {
		return nil
	}
	return cannotRun(fmt.Errorf("%s: issue #%d: the checkpoint still holds the issue template's placeholder issue: 0, and the guard has not run on the issue yet: its first run sets the number (its status comment says so). Wait for that run, then run %s again", verb, n, verb))
}
