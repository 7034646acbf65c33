package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/fence"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// pruneReport is the JSON form of `prune`. When nothing is pruned, Body
// is the body as it was, Archives is empty and NewBudget is Budget.
type pruneReport struct {
	File string `json:"file"`
	// Pruned says a trigger of the guard fired and the guard would write
	// the pruned body; Reason says why, or why not.
	Pruned    bool         `json:"pruned"`
	Reason    string       `json:"reason"`
	Body      string       `json:"body"`
	Archives  []string     `json:"archives"`
	SHA256    string       `json:"sha256"`
	Removed   int          `json:"removed"`
	Budget    prune.Budget `json:"budget"`
	NewBudget prune.Budget `json:"new_budget"`
	OldBytes  int          `json:"old_bytes"`
	NewBytes  int          `json:"new_bytes"`
	// Grew says a trigger fired but the pruned body would not be smaller,
	// so the guard writes nothing.
	Grew bool `json:"grew"`
	// Findings are the checkpoint's errors when it is not valid (and so is
	// never pruned).
	Findings []finding.Finding `json:"findings"`
}

// pruneOptions are the parsed flags and FILE of `prune`.
type pruneOptions struct {
	offlineOptions
	nowFlag string
	now     time.Time // --now, when it is given
}

// pruneFlags declares the flags of `prune`.
func pruneFlags(fs *flag.FlagSet) options {
	o := &pruneOptions{}
	o.declare(fs, "output format: `text|json` (text: the body, then each archive after a '--- archive part i/n ---' line)",
		"the issue's live labels, comma-separated (`L1,L2`), for state.labels (default: the checkpoint's own)")
	fs.StringVar(&o.nowFlag, "now", "", "RFC 3339 `TIME` stamped on tail entries that lack one (default: now)")
	return o
}

func (o *pruneOptions) validate(fs *flag.FlagSet, pos []string, env Env) error {
	if err := o.validateOffline("prune", fs, pos, env); err != nil {
		return err
	}
	if o.nowFlag == "" {
		return nil
	}
	now, err := time.Parse(time.RFC3339, o.nowFlag)
	if err != nil {
		return usageError("prune: --now must be an RFC 3339 time such as 2026-05-16T13:20:00Z, not %q", o.nowFlag)
	}
	o.now = now
	return nil
}

// clock is the time stamped on tail entries that lack one: --now, else
// the clock's.
func (o *pruneOptions) clock(env Env) time.Time {
	if o.nowFlag == "" {
		return env.Now().UTC()
	}
	return o.now
}

// runPrune prints what pruning makes of a body, exactly as the guard
// decides it offline (the decision `check` runs): when a trigger fires,
// the new body, then the archive comment(s) the action would post first;
// otherwise the body unchanged, and a line on standard error saying which
// triggers were checked. It reads and writes no issue. The labels are the
// checkpoint's own unless --labels gives the live ones.
func runPrune(ctx context.Context, o *pruneOptions, env Env) error {
	body, counter, err := o.read(env, o.config.Encoding)
	if err != nil {
		return err
	}
	now := o.clock(env)
	done, cancel := deadline(ctx)
	defer cancel()
	d := decideOffline(o.input(body, counter, now, done))
	if err := ctx.Err(); err != nil {
		return err
	}
	rep := pruneReport{File: o.source(), Body: body, Archives: []string{}, OldBytes: len(body), NewBytes: len(body), Findings: []finding.Finding{}}
	if !d.parsed.Valid() {
		return refusePrune(env, o.format, rep, d.parsed)
	}
	if res := d.plan.Prune; res != nil {
		rep.pruned(res)
		fmt.Fprintf(env.Stderr, "%s: pruned (%s): %s archived in %s, %d → %d bytes\n", rep.File, res.Reason, plural(res.Removed, "entry"), plural(len(res.Archives), "part"), res.OldBytes, res.NewBytes)
	} else {
		rep.notPruned(body, d, now, o.config)
		fmt.Fprintf(env.Stderr, "%s: not pruned, the body is printed unchanged: %s\n", rep.File, oneLine(rep.Reason))
	}
	return printPrune(env, o.format, rep)
}

// refusePrune reports a body whose checkpoint is not valid, and so is
// never pruned: its findings, then why. Exit 1.
func refusePrune(env Env, format string, rep pruneReport, parsed checkpoint.Result) error {
	found := parsed.Findings
	if len(parsed.Blocks) == 0 {
		found = append(found, finding.Finding{
			Rule: checkpoint.RuleMissing, Severity: finding.Error, Line: 1, Col: 1,
			Message: "no checkpoint block found: expected a ```yaml fenced block whose root key is checkpoint (run 'gns-guard schema' for its shape)",
		})
	}
	rep.Findings = finding.Sort(found)
	rep.Reason = "the checkpoint is not valid; a body that cannot be trusted is never pruned"
	if format == "json" {
		if err := printJSON(env, rep); err != nil {
			return err
		}
	} else {
		for _, f := range rep.Findings {
			fmt.Fprintln(env.Stdout, f.Format(rep.File))
		}
	}
	fmt.Fprintf(env.Stderr, "%s: %s\n", rep.File, rep.Reason)
	return errViolations
}

// pruned fills the report from the prune the guard planned.
func (rep *pruneReport) pruned(res *prune.Result) {
	rep.Pruned, rep.Reason = true, res.Reason
	rep.Body, rep.SHA256, rep.Removed = res.Body, res.SHA256, res.Removed
	rep.Budget, rep.NewBudget, rep.OldBytes, rep.NewBytes = res.Budget, res.NewBudget, res.OldBytes, res.NewBytes
	if res.Archives != nil {
		rep.Archives = res.Archives
	}
}

// notPruned fills the report of a body the guard does not prune: its
// budget as it stands, and why no trigger fired, or why one that fired
// writes nothing.
func (rep *pruneReport) notPruned(body string, d offline, now time.Time, cfg config.Config) {
	cp := d.parsed.Checkpoint
	rep.Budget = prune.Budget{Total: cp.Budget.Total.Value, Consumed: cp.Budget.Consumed.Value, Remaining: cp.Budget.Remaining.Value}
	rep.NewBudget = rep.Budget
	trig := pruneTriggers(cp, d.plan.Numbers, cfg)
	rep.Reason = trig.explain()
	for _, f := range d.plan.Warnings {
		// A trigger fired but the guard writes nothing: its warning says why.
		if f.Rule == guard.RulePrune || f.Rule == guard.RuleCheckpointOverweight {
			rep.Reason = f.Message
		}
	}
	if trig.fired() {
		rep.Grew = wouldGrow(body, d, now, cfg, trig)
	}
}

// printPrune prints the JSON report, or the body followed by each archive
// part.
func printPrune(env Env, format string, rep pruneReport) error {
	if format == "json" {
		return printJSON(env, rep)
	}
	var b strings.Builder
	b.WriteString(rep.Body)
	if rep.Pruned && !strings.HasSuffix(rep.Body, "\n") {
		b.WriteByte('\n')
	}
	for i, a := range rep.Archives {
		fmt.Fprintf(&b, "--- archive part %d/%d ---\n", i+1, len(rep.Archives))
		b.WriteString(a)
	}
	printUntrusted(env, b.String())
	return nil
}

// printIndented prints v as JSON indented by two spaces, with <, > and &
// escaped (as encoding/json.MarshalIndent writes them). Only a value that
// cannot be encoded is an error.
func printIndented(env Env, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return cannotRun(err)
	}
	fmt.Fprintf(env.Stdout, "%s\n", data)
	return nil
}

// printJSON prints v as indented JSON (with <, > and & as they are).
func printJSON(env Env, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return cannotRun(err)
	}
	_, err := env.Stdout.Write(b.Bytes())
	return err
}

// triggers are the three prune triggers of the guard (docs/contract.md §5), with the
// numbers each was judged on.
type triggers struct {
	consumed, total, remaining int64
	threshold                  float64
	tailSet                    bool
	tail, entries, tailLimit   int
	tokens                     int
	overhead                   int64
	size                       string
}

// pruneTriggers reads the triggers as the guard judges them: the budget
// (consumed > threshold * total, while some remains), the tail's length,
// and the checkpoint's tokens against the task size's overhead.
func pruneTriggers(cp *checkpoint.Checkpoint, n guard.Numbers, cfg config.Config) triggers {
	t := triggers{
		consumed: cp.Budget.Consumed.Value, total: cp.Budget.Total.Value, remaining: cp.Budget.Remaining.Value,
		threshold: cfg.PruneThreshold,
		tailSet:   cp.HistoryTail.Set, tail: len(cp.HistoryTail.Items), entries: len(cp.Entries()), tailLimit: cfg.HistoryTail,
		tokens: n.CheckpointTokens, size: n.TaskSize, overhead: -1,
	}
	if s, ok := issues.TaskSizeNamed(n.TaskSize); ok {
		t.overhead = s.Overhead
	}
	return t
}

func (t triggers) overBudget() bool {
	return float64(t.consumed) > t.threshold*float64(t.total) && t.remaining > 0
}
func (t triggers) tailTooLong() bool { return t.tailSet && t.tail > t.tailLimit }
func (t triggers) overweight() bool  { return t.overhead >= 0 && int64(t.tokens) > t.overhead }
func (t triggers) fired() bool       { return t.overBudget() || t.tailTooLong() || t.overweight() }

// explain says, in one line, how each trigger was judged.
func (t triggers) explain() string {
	limit := fmt.Sprintf("%s (%s of total %d)", plainFloat(t.threshold*float64(t.total)), ratioPercent(t.threshold), t.total)
	var budget string
	switch {
	case float64(t.consumed) > t.threshold*float64(t.total) && t.remaining <= 0:
		budget = fmt.Sprintf("consumed %d > %s, but the budget is exhausted (remaining %d) and waits for a person", t.consumed, limit, t.remaining)
	case float64(t.consumed) > t.threshold*float64(t.total):
		budget = fmt.Sprintf("consumed %d > %s", t.consumed, limit)
	default:
		budget = fmt.Sprintf("consumed %d <= %s", t.consumed, limit)
	}
	var tail string
	switch {
	case !t.tailSet:
		tail = fmt.Sprintf("no history_tail (history holds %d entries; history-tail %d)", t.entries, t.tailLimit)
	case t.tail > checkpoint.TailMost(t.tailLimit):
		tail = fmt.Sprintf("history_tail %d entries > %d, twice history-tail %d", t.tail, checkpoint.TailMost(t.tailLimit), t.tailLimit)
	default:
		tail = fmt.Sprintf("history_tail %d entries <= %d, twice history-tail %d", t.tail, checkpoint.TailMost(t.tailLimit), t.tailLimit)
	}
	var weight string
	switch {
	case t.overhead < 0:
		weight = fmt.Sprintf("checkpoint %d tokens, task size unknown", t.tokens)
	case int64(t.tokens) > t.overhead:
		weight = fmt.Sprintf("checkpoint %d tokens > %d overhead of a %s task", t.tokens, t.overhead, t.size)
	default:
		weight = fmt.Sprintf("checkpoint %d tokens <= %d overhead of a %s task", t.tokens, t.overhead, t.size)
	}
	what := "no prune trigger fires"
	if t.fired() {
		what = "a prune trigger fires but the guard would write nothing"
	}
	return fmt.Sprintf("%s: %s; %s; %s", what, budget, tail, weight)
}

// wouldGrow says the prune a trigger asked for was dropped because the
// new body would not be smaller: the guard's own prune, planned again.
func wouldGrow(body string, d offline, now time.Time, cfg config.Config, t triggers) bool {
	res, err := prune.Plan(body, d.parsed, d.number, d.labels, now, prune.Config{
		CarryoverRatio: cfg.CarryoverRatio, PhaseGrant: cfg.PhaseGrant, TailLimit: cfg.HistoryTail,
		ResetBudget: t.overBudget(),
	})
	return err == nil && res.Grew
}

// ratioPercent prints a ratio as a percentage: 0.8 as 80%.
func ratioPercent(r float64) string { return plainFloat(r*100) + "%" }

// plainFloat prints a number without a needless fraction.
func plainFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// printUntrusted prints text that holds issue content. Inside Actions
// (GITHUB_ACTIONS=true) the runner would obey workflow commands in it, so
// it is fenced with ::stop-commands::<random token> and ::<token>::.
func printUntrusted(env Env, text string) {
	if env.Getenv("GITHUB_ACTIONS") != "true" {
		fmt.Fprint(env.Stdout, text)
		return
	}
	fmt.Fprint(env.Stdout, fence.New().Wrap(text))
}
