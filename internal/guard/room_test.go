package guard

import (
	"fmt"
	"slices"
	"testing"
)

// The room `context` prints is the guard's own verdict: an estimate of
// Most passes next-over-budget and context-pressure, one token more fails
// one of them; a call that consumes PhaseEndsAt ends the phase on the
// next run, one token less does not.
func TestRoomIsWhatTheRulesAllow(t *testing.T) {
	for _, c := range []struct {
		remaining int64
		size      string
		limit     string
	}{{7000, "size::medium", RuleNextOverBudget}, {1500, "size::medium", RuleNextOverBudget}, {301, "size::medium", RuleNextOverBudget}, {7000, "size::tiny", RuleContextPressure}} {
		remaining, size := c.remaining, c.size
		consumed := 10000 - remaining
		b := body("consumed: 3000", fmt.Sprintf("consumed: %d", consumed), "remaining: 7000", fmt.Sprintf("remaining: %d", remaining))
		in := input(t, b, "cascade::depth-2", size)
		room := RoomOf(Decide(in).Numbers, in.Config)
		if room.Most <= 0 {
			t.Fatalf("remaining %d: no room (%+v)", remaining, room)
		}
		fails := func(next int64) []string {
			p := Decide(input(t, body("consumed: 3000", fmt.Sprintf("consumed: %d", consumed), "remaining: 7000", fmt.Sprintf("remaining: %d", remaining),
				"next_estimated_tokens: 1500", fmt.Sprintf("next_estimated_tokens: %d", next)), "cascade::depth-2", size))
			var out []string
			for _, v := range p.Violations {
				if v.Rule == RuleNextOverBudget || v.Rule == RuleContextPressure {
					out = append(out, v.Rule)
				}
			}
			return out
		}
		if got := fails(room.Most); len(got) > 0 {
			t.Errorf("remaining %d: an estimate of Most (%d) fails %v", remaining, room.Most, got)
		}
		if got := fails(room.Most + 1); !slices.Equal(got, []string{c.limit}) {
			t.Errorf("remaining %d, %s: an estimate of Most+1 (%d) fails %v, want %s", remaining, size, room.Most+1, got, c.limit)
		}
		if c := room.PhaseEndsAt; c > 0 && (!overThreshold(consumed+c, 10000, in.Config.PruneThreshold) || overThreshold(consumed+c-1, 10000, in.Config.PruneThreshold)) {
			t.Errorf("remaining %d: PhaseEndsAt %d is not the least consumption that ends the phase", remaining, c)
		}
	}
	if !slices.Equal([]int64{NextAllowance(7000), NextAllowance(301)}, []int64{3500, 150}) {
		t.Error("next-over-budget allows half of what remains, rounded down")
	}
}
