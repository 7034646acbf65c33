package guard

import (
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// measureSpent: earlier phases as accepted, plus the checkpoint's consumed.
func (e *decision) measureSpent() {
	n := &e.plan.Numbers
	n.EarlierPhases = e.earlierPhases(n.BudgetConsumed)
	n.Lifetime = ledger.AddTokens(n.EarlierPhases, max(n.BudgetConsumed, 0))
}

// earlierPhases is what the phases before the current one consumed, for a
// checkpoint that says consumed: the trusted ledger's figure and, when
// consumed fell below what the ledger accepted, the phase that ended
// there (a new phase began since).
func (e *decision) earlierPhases(consumed int64) int64 {
	old := e.trust.ledger
	if old == nil || !old.Baseline {
		return 0
	}
	earlier := old.EarlierPhases()
	if consumed < old.Consumed {
		earlier = ledger.AddTokens(earlier, old.Consumed)
	}
	return earlier
}

// maxBurnText bounds the agent name a point carries.
const maxBurnText = 32

// recordBurn appends the state l accepts to the burn series: the checkpoint as
// left, and the reset budget after it when this run's prune starts a new phase.
// A state the series already ends with adds nothing, so a re-run writes the
// same record.
func (e *decision) recordBurn(l *ledger.Record, pruned bool) {
	consumed := e.cp.Budget.Consumed.Value
	reset := pruned && l.Consumed < consumed
	l.Earlier = e.earlierPhases(consumed)
	if reset {
		l.Earlier = ledger.AddTokens(l.Earlier, consumed)
	}
	old := e.trust.ledger
	var pts []ledger.BurnPoint
	if old != nil {
		pts = append(pts, old.Burn...)
		if len(pts) == 0 && old.Baseline {
			// A record from before the series starts it.
			pts = append(pts, ledger.BurnPoint{N: 1, T: old.Written, Consumed: old.Consumed, Remaining: old.Remaining})
		}
	}
	var t int64
	if !e.in.Now.IsZero() {
		t = e.in.Now.Unix()
	}
	add := func(p ledger.BurnPoint) {
		n := len(pts)
		if n == 0 {
			// The first state accepted is the start, whoever spent it.
			p.N, p.Agent = 1, ""
			pts = append(pts, p)
			return
		}
		last := pts[n-1]
		if last.Consumed == p.Consumed && last.Remaining == p.Remaining && (last.Invocation == p.Invocation || last.Agent == "") {
			return
		}
		p.N = last.N + 1
		pts = append(pts, p)
	}
	if cp := e.cp; cp != nil {
		b := cp.Budget
		add(ledger.BurnPoint{T: t, Agent: cut(cp.LastAgent.Value, maxBurnText),
			Invocation: ledger.InvocationTag(cp.LastInvocation.Value), Consumed: b.Consumed.Value, Remaining: b.Remaining.Value})
	}
	if reset {
		add(ledger.BurnPoint{T: t, Consumed: l.Consumed, Remaining: l.Remaining})
	}
	if len(pts) > ledger.MaxBurnPoints {
		pts = pts[len(pts)-ledger.MaxBurnPoints:]
	}
	l.Burn = pts
}

// cut shortens s to at most n characters.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
