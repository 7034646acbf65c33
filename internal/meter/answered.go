package meter

import (
	"context"
	"sync"
	"time"

	"github.com/gns-guard/gns-guard/internal/meterstore"
)

// A call is settled and logged after its answer ends, off the client's
// path. What reads its spend waits for it (docs/meter.md#performance).

// settleWait bounds a wait for settlements: a settlement's own deadline.
const settleWait = 30 * time.Second

// answered holds the calls whose answer ended and that are not yet
// settled and logged.
type answered struct {
	mu    sync.Mutex
	calls map[*exchange]struct{}
}

func newAnswered() *answered { return &answered{calls: map[*exchange]struct{}{}} }

// track notes that x's answer ended, before the client can see it end.
func (a *answered) track(x *exchange) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if x.settled != nil {
		return
	}
	x.settled, x.logged = make(chan struct{}), make(chan struct{})
	a.calls[x] = struct{}{}
}

// finished notes that x is settled and logged.
func (a *answered) finished(x *exchange) {
	a.mu.Lock()
	delete(a.calls, x)
	a.mu.Unlock()
	close(x.logged)
}

// wait returns once the calls answered so far that match are settled
// (logged too, with logged), ctx ends, or settleWait passes.
func (a *answered) wait(ctx context.Context, match func(*exchange) bool, logged bool) {
	a.mu.Lock()
	var chs []chan struct{}
	for x := range a.calls {
		switch {
		case !match(x):
		case logged:
			chs = append(chs, x.logged)
		default:
			chs = append(chs, x.settled)
		}
	}
	a.mu.Unlock()
	if len(chs) == 0 {
		return
	}
	t := time.NewTimer(settleWait)
	defer t.Stop()
	for _, ch := range chs {
		select {
		case <-ch:
		case <-ctx.Done():
			return
		case <-t.C:
			return
		}
	}
}

// onIssue matches the calls on an issue (a store key), of invocation inv
// when it is not empty.
func onIssue(iss meterstore.Issue, inv string) func(*exchange) bool {
	return func(x *exchange) bool {
		return x.repo.key() == iss.Repo && (iss.Number == 0 || x.route.Issue == iss.Number) && (inv == "" || x.route.Invocation == inv)
	}
}

// settled waits for the settlements of the calls answered on iss (every
// issue of its repository when its number is 0) in invocation inv (every
// one when empty).
func (m *Meter) settled(ctx context.Context, iss meterstore.Issue, inv string) {
	m.answered.wait(ctx, onIssue(iss, inv), false)
}

// inFlightWait bounds how long an invocation's total waits for its calls
// in flight: another meter on the store may be settling one whose answer
// ended.
const inFlightWait = time.Second

// invocationTotals sums invocation inv once the calls answered in it are
// settled: this meter's, then for up to inFlightWait, any other meter's.
func (m *Meter) invocationTotals(ctx context.Context, iss meterstore.Issue, inv string) (meterstore.Totals, error) {
	m.settled(ctx, iss, inv)
	t, err := m.o.Store.Invocation(ctx, iss, inv)
	for deadline := time.Now().Add(inFlightWait); err == nil && t.InFlight > 0 && time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return t, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		t, err = m.o.Store.Invocation(ctx, iss, inv)
	}
	return t, err
}
