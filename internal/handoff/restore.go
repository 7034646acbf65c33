package handoff

import (
	"fmt"
	"strconv"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
)

// Restore proposes the state the guard accepted last (base) for a valid
// checkpoint changed against it: version and issue, total and remaining no
// higher, consumed no lower (docs/contract.md §4b). What honest reports
// added since stays. Each restored field says what the body held; nil when
// nothing needs it.
func Restore(cp *checkpoint.Checkpoint, base Baseline) (*Proposal, error) {
	p := &Proposal{Since: []int64{}}
	next := cp
	restore := func(key string, body, accepted int64, set func(*checkpoint.Checkpoint) *checkpoint.Checkpoint) {
		next = set(next)
		p.Fields = append(p.Fields, Field{Key: key, Value: strconv.FormatInt(accepted, 10),
			Source: fmt.Sprintf("%s; the body held %d", base.Source, body)})
	}
	if v := cp.Version.Value; v != base.Version {
		restore("version", v, base.Version, func(c *checkpoint.Checkpoint) *checkpoint.Checkpoint { return c.WithInt("version", base.Version) })
	}
	if v := cp.Issue.Value; v != base.Issue {
		restore("issue", v, base.Issue, func(c *checkpoint.Checkpoint) *checkpoint.Checkpoint { return c.WithInt("issue", base.Issue) })
	}
	b := cp.Budget
	total, consumed := min(b.Total.Value, base.Total), max(b.Consumed.Value, base.Consumed)
	remaining := min(b.Remaining.Value, total-consumed)
	budget := func(c *checkpoint.Checkpoint) *checkpoint.Checkpoint { return c.WithBudget(total, consumed, remaining) }
	if total != b.Total.Value {
		restore("budget.total", b.Total.Value, total, budget)
	}
	if consumed != b.Consumed.Value {
		restore("budget.consumed", b.Consumed.Value, consumed, budget)
	}
	if remaining != b.Remaining.Value {
		restore("budget.remaining", b.Remaining.Value, remaining, budget)
	}
	if len(p.Fields) == 0 {
		return nil, nil
	}
	text, err := next.Encode()
	if err != nil {
		return nil, err
	}
	p.YAML = text
	p.Notes = append(p.Notes, "every other field is the body's as it stands: only the fields above differ from the state the guard accepted")
	return p, nil
}
