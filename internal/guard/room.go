package guard

import (
	"math"

	"github.com/gns-guard/gns-guard/internal/config"
)

// Room is the room the guard leaves the next agent call, as it judges the
// issue now: what next_estimated_tokens may be before next-over-budget or
// context-pressure fails, and what the call may consume before the
// budget's prune ends the phase. `context` prints it; an agent that
// reports takes its estimate from it (docs/agents.md).
type Room struct {
	// BudgetRemaining is budget.remaining; next-over-budget allows half of
	// it (NextAllowance).
	BudgetRemaining int64 `json:"budget_remaining"`
	// PressureRoom is pressure-threshold × max context less the entry load
	// now.
	PressureRoom int64 `json:"pressure_room"`
	// Most is min(NextAllowance, PressureRoom), at least 0.
	Most int64 `json:"most"`
	// PhaseEndsAt is the least the agent's own call may consume for the
	// guard's prune to end the phase (consumed > prune-threshold × total
	// once it is reported): the budget the next call then has is the new
	// phase's, floor((BudgetRemaining − consumption) × CarryoverRatio) +
	// PhaseGrant (docs/pruning.md#how). 0: the phase ends on the guard's
	// next run whatever the call consumes.
	PhaseEndsAt    int64   `json:"phase_ends_at"`
	CarryoverRatio float64 `json:"carryover_ratio"`
	PhaseGrant     int64   `json:"phase_grant"`
}

// RoomOf is n's room for the next call under cfg.
func RoomOf(n Numbers, cfg config.Config) Room {
	room := pressureLimit(n.MaxContext, cfg.PressureThreshold) - (n.ContextTokens - n.NextEstimated)
	return Room{BudgetRemaining: n.BudgetRemaining, PressureRoom: room, Most: max(min(NextAllowance(n.BudgetRemaining), room), 0),
		PhaseEndsAt:    phaseEndsAt(n.BudgetConsumed, n.BudgetTotal, cfg.PruneThreshold),
		CarryoverRatio: cfg.CarryoverRatio, PhaseGrant: cfg.PhaseGrant}
}

// NextAllowance is half the remaining budget (next-over-budget).
func NextAllowance(remaining int64) int64 { return remaining / 2 }

// pressureLimit is the most context before context-pressure fails.
func pressureLimit(maxContext int64, threshold float64) int64 {
	return int64(math.Floor(threshold * float64(maxContext)))
}

// overThreshold says consumed > threshold × total: prune is due.
func overThreshold(consumed, total int64, threshold float64) bool {
	return float64(consumed) > threshold*float64(total)
}

// phaseEndsAt is the least c >= 0 with overThreshold(consumed + c).
func phaseEndsAt(consumed, total int64, threshold float64) int64 {
	if overThreshold(consumed, total, threshold) {
		return 0
	}
	c := max(int64(math.Floor(threshold*float64(total)))-consumed, 0)
	for c > 0 && overThreshold(consumed+c-1, total, threshold) {
		c--
	}
	for !overThreshold(consumed+c, total, threshold) {
		c++
	}
	return c
}
