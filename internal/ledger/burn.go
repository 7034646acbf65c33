package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gns-guard/gns-guard/internal/burn"
)

// BurnPoint is one accepted state of an issue's budget, kept in the ledger
// so the burn chart survives pruning. A point with no agent is the start or
// a reset by pruning: no agent spent it. In the record it is a compact
// array, [n, t, consumed, remaining, agent, tag], since agents load the
// status comment.
type BurnPoint struct {
	N          int
	T          int64
	Agent      string
	Invocation string
	Consumed   int64
	Remaining  int64
}

// MarshalJSON writes [n, t, consumed, remaining, agent, tag].
func (p BurnPoint) MarshalJSON() ([]byte, error) {
	return json.Marshal([]any{p.N, p.T, p.Consumed, p.Remaining, p.Agent, p.Invocation})
}

// UnmarshalJSON reads the array MarshalJSON writes.
func (p *BurnPoint) UnmarshalJSON(data []byte) error {
	var a []json.RawMessage
	if err := json.Unmarshal(data, &a); err != nil {
		return err
	}
	if len(a) != 6 {
		return fmt.Errorf("a burn point has 6 fields, found %d", len(a))
	}
	for i, dst := range []any{&p.N, &p.T, &p.Consumed, &p.Remaining, &p.Agent, &p.Invocation} {
		if err := json.Unmarshal(a[i], dst); err != nil {
			return err
		}
	}
	return nil
}

// InvocationTag is a short hash: finds a report's state, small in the
// record.
func InvocationTag(inv string) string {
	if inv == "" {
		return ""
	}
	h := sha256.Sum256([]byte(inv))
	return hex.EncodeToString(h[:3])
}

// MaxBurnPoints is how many accepted states the ledger keeps: the newest.
// Each costs about 25 tokens of the status comment, which counts among the
// last comments of the entry load, so the series stays short.
const MaxBurnPoints = 12

// EarlierPhases is what the issue's phases before the record's consumed,
// as the guard accepted it: Earlier, or for a record written before the
// ledger kept it, what its burn series shows ended: the consumed before
// every fall of consumed (a new phase). 0 for a nil record.
func (l *Record) EarlierPhases() int64 {
	switch {
	case l == nil:
		return 0
	case l.Earlier > 0:
		return l.Earlier
	}
	var sum int64
	for i := 1; i < len(l.Burn); i++ {
		if prev := l.Burn[i-1].Consumed; l.Burn[i].Consumed < prev && prev > 0 {
			sum = AddTokens(sum, prev)
		}
	}
	return sum
}

// BurnSeries is for package burn's charts; a nil ledger gives an empty
// series.
func BurnSeries(issue int64, title string, l *Record) burn.Series {
	s := burn.Series{Issue: issue, Title: title}
	if l == nil {
		return s
	}
	s.Total = l.Total
	for _, p := range l.Burn {
		pt := burn.Point{Step: p.N, Agent: p.Agent, Consumed: p.Consumed, Remaining: p.Remaining}
		if p.T > 0 {
			pt.At = time.Unix(p.T, 0).UTC()
		}
		s.Points = append(s.Points, pt)
	}
	return s
}
