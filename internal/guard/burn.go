package guard

import (
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// maxBurnText bounds the agent name a point carries.
const maxBurnText = 32

// recordBurn appends the state l accepts to the burn series of the last
// trusted ledger: the checkpoint as the agents left it and, when this run
// prunes, the reset budget after it. A state the series already ends with
// adds nothing, so a re-run or a decision made again writes the same record.
func (e *eval) recordBurn(l *ledger.Record, pruned bool) {
	old := e.trust.ledger
	var pts []ledger.BurnPoint
	if old != nil {
		pts = append(pts, old.Burn...)
		if len(pts) == 0 && old.Baseline {
			// A record from before the series: its state is the start.
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
		add(ledger.BurnPoint{T: t, Agent: cut(cp.LastAgent.Value, maxBurnText), Invocation: ledger.InvocationTag(cp.LastInvocation.Value), Consumed: b.Consumed.Value, Remaining: b.Remaining.Value})
	}
	if pruned {
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
