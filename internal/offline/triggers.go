package offline

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/prune"
)

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
func wouldGrow(body string, d Decision, now time.Time, cfg config.Config, t triggers) bool {
	res, err := prune.Plan(body, d.Parsed, d.Number, d.Labels, now, prune.Config{
		CarryoverRatio: cfg.CarryoverRatio, PhaseGrant: cfg.PhaseGrant, TailLimit: cfg.HistoryTail,
		ResetBudget: t.overBudget(),
	})
	return err == nil && res.Grew
}

// ratioPercent prints a ratio as a percentage: 0.8 as 80%.
func ratioPercent(r float64) string { return plainFloat(r*100) + "%" }

// plainFloat prints a number without a needless fraction.
func plainFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
