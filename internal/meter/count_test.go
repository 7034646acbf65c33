package meter

import (
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/tokens"
)

// The memo answers what the counter answers, for every text, seen before
// or not, and holds at most two generations of counts.
func TestMemoCounter(t *testing.T) {
	c, err := tokens.New(tokens.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	mc := memoCounter{c: c, memo: newCountMemo()}
	long := strings.Repeat("The limiter keeps the gateway's callers under quota. ", 40)
	texts := []string{"short", long, long + "!", strings.ToUpper(long), long[:memoMin], long[:memoMin-1]}
	for round := range 2 {
		for _, text := range texts {
			if got, want := mc.Count(text), c.Count(text); got != want {
				t.Errorf("round %d, %d bytes: %d tokens, the counter says %d", round, len(text), got, want)
			}
		}
	}
	if n := len(mc.memo.cur); n != 4 {
		t.Errorf("%d counts remembered, want the 4 texts of %d bytes or more", n, memoMin)
	}
	for i := range 2*memoSize + 10 {
		mc.memo.put(memoKey{n: i}, i)
	}
	if n := len(mc.memo.cur) + len(mc.memo.older); n > 2*memoSize {
		t.Errorf("the memo holds %d counts, more than two generations of %d", n, memoSize)
	}
	if got := mc.Count(long); got != c.Count(long) {
		t.Errorf("after the memo turned over: %d", got)
	}
}
