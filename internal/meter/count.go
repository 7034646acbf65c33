package meter

import (
	"hash/maphash"
	"sync"

	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// An agent sends its whole conversation again on every call. The memo
// keeps the count of each long text by its length and a hash seeded by
// this process, which nobody outside can make collide. A count only sizes
// the reservation: a call is charged the provider's usage
// (docs/meter.md#performance).
const (
	// memoMin is the shortest text remembered: shorter ones count faster
	// than a look-up pays for.
	memoMin = 512
	// memoSize is the counts a generation holds. When the newer is full it
	// becomes the older, and the older's counts are dropped: at most two
	// generations, about 2 MB.
	memoSize = 1 << 15
)

type memoKey struct {
	enc  tokens.Encoding
	n    int
	hash uint64
}

// countMemo is the counts remembered, shared by every call.
type countMemo struct {
	seed       maphash.Seed
	mu         sync.Mutex
	cur, older map[memoKey]int
}

func newCountMemo() *countMemo {
	return &countMemo{seed: maphash.MakeSeed(), cur: map[memoKey]int{}}
}

func (m *countMemo) get(k memoKey) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n, ok := m.cur[k]; ok {
		return n, true
	}
	n, ok := m.older[k]
	if ok {
		m.putLocked(k, n)
	}
	return n, ok
}

func (m *countMemo) put(k memoKey, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.putLocked(k, n)
}

func (m *countMemo) putLocked(k memoKey, n int) {
	if len(m.cur) >= memoSize {
		m.older, m.cur = m.cur, make(map[memoKey]int, memoSize)
	}
	m.cur[k] = n
}

// memoCounter counts with c, through the memo.
type memoCounter struct {
	c    *tokens.Counter
	memo *countMemo
}

func (mc memoCounter) Count(text string) int {
	if len(text) < memoMin {
		return mc.c.Count(text)
	}
	k := memoKey{enc: mc.c.Encoding(), n: len(text), hash: maphash.String(mc.memo.seed, text)}
	if n, ok := mc.memo.get(k); ok {
		return n
	}
	n := mc.c.Count(text)
	mc.memo.put(k, n)
	return n
}

// callCounter is the counter ReadCall counts a request's texts with.
func (m *Meter) callCounter(enc tokens.Encoding) metering.Counter {
	c := m.counter(enc)
	if c == nil {
		return nil
	}
	return memoCounter{c: c, memo: m.memo}
}
