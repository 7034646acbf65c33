package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/action"
	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/prune"
	"github.com/gns-guard/gns-guard/internal/tokens"
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

// runPrune prints what pruning makes of a body, exactly as the guard
// decides it offline (the decision `check` runs): when a trigger fires,
// the new body, then the archive comment(s) the action would post first;
// otherwise the body unchanged, and a line on standard error saying which
// triggers were checked. It reads and writes no issue. The labels are the
// checkpoint's own unless --labels gives the live ones.
func runPrune(args []string, env Env) error {
	fs := newFlags("prune", env, "prune FILE|- [flags]")
	format := fs.String("format", "text", "output format: text (the body, then each archive after a '--- archive part i/n ---' line) or json")
	nowFlag := fs.String("now", "", "RFC 3339 time stamped on tail entries that lack one (default: now)")
	labels := fs.String("labels", "", "the issue's live labels, comma-separated, for state.labels (default: the checkpoint's own)")
	issue := fs.Int64("issue", 0, "the issue's number; checkpoint.issue must match it (0: take it from the checkpoint)")
	conf := offlineConfigFlags(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	name, err := oneArg("prune", pos)
	if err != nil {
		return err
	}
	if err := checkFormat("prune", *format); err != nil {
		return err
	}
	cfg, err := conf("prune", env)
	if err != nil {
		return err
	}
	now := env.Now().UTC()
	if *nowFlag != "" {
		if now, err = time.Parse(time.RFC3339, *nowFlag); err != nil {
			return usageError("prune: --now must be an RFC 3339 time such as 2026-05-16T13:20:00Z, not %q", *nowFlag)
		}
	}
	body, err := readInput(env, name)
	if err != nil {
		return err
	}
	counter, err := tokens.New(cfg.Encoding)
	if err != nil {
		return cannotRun(err)
	}
	source := name
	if name == "-" {
		source = "stdin"
	}

	done, cancel := deadline()
	defer cancel()
	d := decideOffline(checkOptions{
		Source: source, Body: body, Issue: *issue, Labels: liveLabels(fs, *labels),
		Config: cfg, Counter: counter, Now: now, Done: done,
	})
	rep := pruneReport{File: source, Body: body, Archives: []string{}, OldBytes: len(body), NewBytes: len(body), Findings: []finding.Finding{}}
	if !d.parsed.Valid() {
		found := d.parsed.Findings
		if len(d.parsed.Blocks) == 0 {
			found = append(found, finding.Finding{
				Rule: checkpoint.RuleMissing, Severity: finding.Error, Line: 1, Col: 1,
				Message: "no checkpoint block found: expected a ```yaml fenced block whose root key is checkpoint (run 'gns-guard schema' for its shape)",
			})
		}
		rep.Findings = finding.Sort(found)
		rep.Reason = "the checkpoint is not valid; a body that cannot be trusted is never pruned"
		if *format == "json" {
			if err := printJSON(env, rep); err != nil {
				return err
			}
		} else {
			for _, f := range rep.Findings {
				fmt.Fprintln(env.Stdout, f.Format(source))
			}
		}
		fmt.Fprintf(env.Stderr, "%s: %s\n", source, rep.Reason)
		return errViolations
	}
	cp := d.parsed.Checkpoint
	rep.Budget = prune.Budget{Total: cp.Budget.Total.Value, Consumed: cp.Budget.Consumed.Value, Remaining: cp.Budget.Remaining.Value}
	rep.NewBudget = rep.Budget
	if res := d.plan.Prune; res != nil {
		rep.Pruned, rep.Reason = true, res.Reason
		rep.Body, rep.SHA256, rep.Removed = res.Body, res.SHA256, res.Removed
		rep.Budget, rep.NewBudget, rep.OldBytes, rep.NewBytes = res.Budget, res.NewBudget, res.OldBytes, res.NewBytes
		if res.Archives != nil {
			rep.Archives = res.Archives
		}
		fmt.Fprintf(env.Stderr, "%s: pruned (%s): %d entries archived in %d part(s), %d → %d bytes\n", source, res.Reason, res.Removed, len(res.Archives), res.OldBytes, res.NewBytes)
	} else {
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
		fmt.Fprintf(env.Stderr, "%s: not pruned, the body is printed unchanged: %s\n", source, oneLine(rep.Reason))
	}
	if *format == "json" {
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
func pruneTriggers(cp *checkpoint.Checkpoint, n guard.Numbers, cfg guard.Config) triggers {
	t := triggers{
		consumed: cp.Budget.Consumed.Value, total: cp.Budget.Total.Value, remaining: cp.Budget.Remaining.Value,
		threshold: cfg.PruneThreshold,
		tailSet:   cp.HistoryTail.Set, tail: len(cp.HistoryTail.Items), entries: len(cp.Entries()), tailLimit: cfg.HistoryTail,
		tokens: n.CheckpointTokens, size: n.TaskSize, overhead: -1,
	}
	if s, ok := guard.TaskSizeNamed(n.TaskSize); ok {
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
	case t.tail > t.tailLimit:
		tail = fmt.Sprintf("history_tail %d entries > history-tail %d", t.tail, t.tailLimit)
	default:
		tail = fmt.Sprintf("history_tail %d entries <= history-tail %d", t.tail, t.tailLimit)
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
func wouldGrow(body string, d offline, now time.Time, cfg guard.Config, t triggers) bool {
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
	fmt.Fprint(env.Stdout, action.NewFence().Wrap(text))
}
