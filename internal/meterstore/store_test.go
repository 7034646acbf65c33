package meterstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/testkit/pgtest"
)

// opener opens the same store again (a meter restarted).
type opener func(t *testing.T) *Store

func sqliteStore(t *testing.T) opener {
	path := filepath.Join(t.TempDir(), "meter.db")
	return func(t *testing.T) *Store { return mustOpen(t, path) }
}

func postgresStore(t *testing.T) opener {
	url := pgtest.Require(t)
	return func(t *testing.T) *Store { return mustOpen(t, url) }
}

func mustOpen(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestStores runs the one suite on both stores.
func TestStores(t *testing.T) {
	for _, tt := range []struct {
		name string
		open func(t *testing.T) opener
	}{{"sqlite", sqliteStore}, {"postgres", postgresStore}} {
		t.Run(tt.name, func(t *testing.T) {
			open := tt.open(t)
			t.Run("pending", func(t *testing.T) { testPending(t, open(t)) })
			t.Run("concurrent admission", func(t *testing.T) { testConcurrent(t, open(t)) })
			t.Run("restart", func(t *testing.T) { testRestart(t, open) })
			t.Run("two meters, four issues", func(t *testing.T) { testTwoMeters(t, open(t), open(t)) })
			t.Run("the gate's invocations", func(t *testing.T) { testOpenInvocations(t, open(t)) })
			t.Run("concurrent openings", func(t *testing.T) { testConcurrentOpenings(t, open(t), open(t)) })
			t.Run("settlements later", func(t *testing.T) { testSettleLater(t, open) })
		})
	}
}

var iss = Issue{Repo: "acme/app", Number: 7}

func call(inv string, worst int64) Call {
	return Call{Issue: iss, Invocation: inv, Login: "coder", Agent: "dev", Model: "gpt-4o", Provider: "openai", Endpoint: "chat/completions",
		Worst: worst, Cost: worst * 10, Started: time.Unix(1790000000, 0)}
}

// admit reserves c when pending plus its worst case stays within budget.
func admit(t *testing.T, s *Store, c Call, budget int64) (int64, metering.Pending) {
	t.Helper()
	id, p, ref, err := s.Reserve(context.Background(), c, func(p metering.Pending) *metering.Refusal {
		if p.Tokens+c.Worst > budget {
			return &metering.Refusal{Rule: "over"}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ref != nil {
		return 0, p
	}
	return id, p
}

func settle(t *testing.T, s *Store, id, tokens int64) {
	t.Helper()
	c := Call{Input: tokens - 10, Output: 10, Tokens: tokens, Cost: tokens * 3, UsageKnown: true, RequestID: fmt.Sprintf("req-%d", id), Finished: time.Unix(1790000001, 0)}
	if err := s.Settle(context.Background(), id, c); err != nil {
		t.Fatal(err)
	}
}

func testPending(t *testing.T, s *Store) {
	ctx := context.Background()
	a, p := admit(t, s, call("inv-1", 500), 10000)
	if a == 0 || p.Tokens != 0 {
		t.Fatalf("first call: id %d, pending %+v", a, p)
	}
	_, p = admit(t, s, call("inv-2", 300), 10000)
	if p.Tokens != 500 {
		t.Errorf("a call in flight is pending at its worst case: pending %d, want 500", p.Tokens)
	}
	settle(t, s, a, 120)
	_, p = admit(t, s, call("inv-2", 100), 10000)
	if p.Tokens != 120+300 {
		t.Errorf("pending %d, want the settled 120 and the 300 in flight", p.Tokens)
	}
	// The checkpoint records inv-1 (twice in one reading): its 120 are in
	// budget.consumed.
	if base, err := s.MarkReported(ctx, iss, 1000, []string{"inv-1", "inv-1"}); err != nil || base != 1000 {
		t.Fatalf("the issue's base %d, %v; want consumed as first seen, 1000", base, err)
	}
	if _, p = admit(t, s, call("inv-3", 1), 10000); p.Tokens != 300+100 || p.Recorded != 120 {
		t.Errorf("a reported invocation is pending: %d (recorded %d, want 120)", p.Tokens, p.Recorded)
	}
	// Spent under inv-1 after its report: pending again, whatever the mark.
	b, _ := admit(t, s, call("inv-1", 80), 10000)
	settle(t, s, b, 70)
	if base, err := s.MarkReported(ctx, iss, 1500, []string{"inv-1"}); err != nil || base != 1000 {
		t.Fatalf("the issue's base %d, %v; the first stands, 1000", base, err)
	}
	if _, p = admit(t, s, call("inv-3", 1), 10000); p.Tokens != 300+100+1+70 {
		t.Errorf("spend after the report of its invocation is not pending: %d, want %d", p.Tokens, 300+100+1+70)
	}
	if id, _ := admit(t, s, call("inv-3", 10000), 10000); id != 0 {
		t.Error("a call over budget was reserved")
	}
	tot, err := s.Invocation(ctx, iss, "inv-1")
	if err != nil || tot.Calls != 2 || tot.Tokens != 190 || tot.Input != 170 || tot.Output != 20 || tot.Cost != 570 || tot.Login != "coder" || tot.InFlight != 0 {
		t.Errorf("invocation totals %+v, %v", tot, err)
	}
	calls, err := s.Calls(ctx, iss)
	if err != nil || len(calls) != 6 || calls[0].RequestID != fmt.Sprintf("req-%d", a) || !calls[0].Settled || calls[1].Settled {
		t.Errorf("calls %+v, %v", calls, err)
	}
	if err := s.Settle(ctx, a, Call{}); err == nil {
		t.Error("a call settled twice")
	}
}

// A settlement queued with SettleLater is seen by the reservation queued
// after it, which commits both; alone, it commits within settleDelay; a
// store closed with one queued commits it first.
func testSettleLater(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	later := Issue{Repo: "acme/later", Number: 1}
	reserve := func(worst int64) (int64, metering.Pending) {
		c := call("inv-later", worst)
		c.Issue = later
		return admit(t, s, c, 10000)
	}
	a, _ := reserve(500)
	settled := Call{Issue: later, Input: 110, Output: 10, Tokens: 120, Cost: 360, UsageKnown: true, Finished: time.Unix(1790000001, 0)}
	wait := s.SettleLater(ctx, a, settled)
	if _, p := reserve(100); p.Tokens != 120 {
		t.Errorf("the reservation after a settlement queued sees %d pending, want the 120 settled", p.Tokens)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	b, _ := reserve(100)
	start := time.Now()
	settled.Issue = Issue{} // PostgreSQL looks it up
	if err := s.SettleLater(ctx, b, settled)(); err != nil || time.Since(start) > 5*time.Second {
		t.Fatalf("a settlement alone: %v after %s", err, time.Since(start))
	}
	c, _ := reserve(100)
	wait = s.SettleLater(ctx, c, settled)
	s.Close()
	if err := wait(); err != nil {
		t.Fatalf("a settlement queued as the store closes: %v", err)
	}
	tot, err := open(t).Invocation(ctx, later, "inv-later")
	if err != nil || tot.Calls != 4 || tot.InFlight != 1 || tot.Tokens != 3*120+100 {
		t.Errorf("after a restart: %+v, %v; want 4 calls, 3 settled at 120 and one in flight at 100", tot, err)
	}
}

// SQLite's writes have a connection of their own: a read waits for no
// write, and a writer's connection that is gone is taken again.
func TestSQLiteReadsWaitForNoWrite(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "meter.db"))
	id, _ := admit(t, s, call("inv-r", 100), 10000)
	settle(t, s, id, 60)
	held, release, done := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		_, _, _, err := s.Reserve(context.Background(), call("inv-w", 100), func(metering.Pending) *metering.Refusal {
			close(held)
			<-release
			return nil
		})
		done <- err
	}()
	<-held
	tot, err := s.Invocation(context.Background(), iss, "inv-r")
	close(release)
	if err != nil || tot.Tokens != 60 {
		t.Errorf("a read during a write: %+v, %v", tot, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s.local.conn.Close()
	if id, _ := admit(t, s, call("inv-w", 100), 10000); id == 0 {
		t.Error("no reservation after the writer's connection closed")
	}
}

// 20 callers at once on a budget of 10 calls' worst case: exactly 10 are
// admitted, whatever the order.
func testConcurrent(t *testing.T, s *Store) {
	other := Issue{Repo: "acme/app", Number: 99}
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted := 0
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := call(fmt.Sprintf("inv-%d", i), 100)
			c.Issue = other
			_, _, ref, err := s.Reserve(context.Background(), c, func(p metering.Pending) *metering.Refusal {
				if p.Tokens+100 > 1000 {
					return &metering.Refusal{Rule: "over"}
				}
				return nil
			})
			if err != nil {
				t.Error(err)
				return
			}
			if ref == nil {
				mu.Lock()
				admitted++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if admitted != 10 {
		t.Errorf("%d of 20 concurrent calls admitted on a budget of 10", admitted)
	}
}

// Two meters on one store, 32 callers on four issues, each reserving and
// settling: the writes of several issues share transactions, which
// neither wait on each other for ever nor pass a budget; a settlement
// of a call not in flight fails alone.
func testTwoMeters(t *testing.T, a, b *Store) {
	const budget, worst = 2000, 100
	var wg sync.WaitGroup
	var admitted [4]atomic.Int64
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := []*Store{a, b}[i%2]
			c := call(fmt.Sprintf("inv-%d", i), worst)
			c.Issue = Issue{Repo: "acme/two", Number: int64(i % 4)}
			for range 8 {
				id, _, ref, err := s.Reserve(context.Background(), c, func(p metering.Pending) *metering.Refusal {
					if p.Tokens+worst > budget {
						return &metering.Refusal{Rule: "over"}
					}
					return nil
				})
				if err != nil || ref != nil {
					if err != nil {
						t.Error(err)
					}
					return
				}
				admitted[i%4].Add(1)
				settled := Call{Tokens: worst, Cost: 1, Finished: time.Unix(1790000001, 0)}
				if i%3 == 0 {
					settled.Issue = c.Issue
				}
				if err := s.Settle(context.Background(), id, settled); err != nil {
					t.Error(err)
				}
				if err := s.Settle(context.Background(), id, settled); err == nil {
					t.Errorf("call %d settled twice", id)
				}
			}
		}()
	}
	wg.Wait()
	for n := range admitted {
		if got := admitted[n].Load(); got != budget/worst {
			t.Errorf("issue %d: %d calls admitted, want %d", n, got, budget/worst)
		}
	}
}

// A write that fails undoes its transaction: the writes committed with it
// run again alone and keep their answers; the failing one writes nothing.
func TestAFailingWriteFailsAlone(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "meter.db"))
	var good int64
	reserve := func(id *int64, fail error) *op {
		run := func(ctx context.Context, tx querier) error {
			var err error
			*id, _, _, err = s.reserve(ctx, tx, call("inv-f", 100), func(metering.Pending) *metering.Refusal { return nil })
			return errors.Join(err, fail)
		}
		return &op{ctx: context.Background(), issue: iss, run: run, done: make(chan error, 1)}
	}
	var failed int64
	boom := errors.New("boom")
	gone := &op{ctx: context.Background(), issue: iss, done: make(chan error, 1),
		run: func(ctx context.Context, tx querier) error { return s.settle(ctx, tx, 999, Call{}) }}
	batch := []*op{reserve(&good, nil), reserve(&failed, boom), gone}
	s.w.writes.Add(len(batch)) // as enqueue counts them
	s.commit(batch)
	if err := <-batch[0].done; err != nil || good == 0 {
		t.Errorf("the good write: %v, id %d", err, good)
	}
	if err := <-batch[1].done; !errors.Is(err, boom) {
		t.Errorf("the failing write: %v, want boom", err)
	}
	var nf notInFlight
	if err := <-gone.done; !errors.As(err, &nf) {
		t.Errorf("a settlement of no call: %v, want not in flight", err)
	}
	calls, err := s.Calls(context.Background(), iss)
	if err != nil || len(calls) != 1 || calls[0].ID != good {
		t.Errorf("the store holds %+v, %v; want the good call alone", calls, err)
	}
}

// A call in flight when the meter stops stays charged at its worst case;
// settled ones keep their figures.
func testRestart(t *testing.T, open opener) {
	s := open(t)
	i3 := Issue{Repo: "acme/app", Number: 3}
	c := call("inv-r", 700)
	c.Issue = i3
	a, _, _, err := s.Reserve(context.Background(), c, func(metering.Pending) *metering.Refusal { return nil })
	if err != nil {
		t.Fatal(err)
	}
	settle(t, s, a, 200)
	if _, _, _, err := s.Reserve(context.Background(), c, func(metering.Pending) *metering.Refusal { return nil }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t)
	tot, err := s.Invocation(context.Background(), i3, "inv-r")
	if err != nil || tot.Calls != 2 || tot.Tokens != 900 || tot.InFlight != 1 || tot.WorstCase != 700 {
		t.Errorf("after a restart: %+v, %v; want 2 calls, 200 settled and 700 in flight, at its worst case", tot, err)
	}
}

// The same calls give the same totals in both stores.
func TestStoresAgree(t *testing.T) {
	url := pgtest.Require(t)
	stores := []*Store{mustOpen(t, filepath.Join(t.TempDir(), "a.db")), mustOpen(t, url)}
	var got [2][]IssueTotals
	for i, s := range stores {
		for k := range 12 {
			c := call(fmt.Sprintf("inv-%d", k%4), int64(100+k))
			c.Issue = Issue{Repo: "acme/agree", Number: int64(1 + k%3)}
			id, _ := admit(t, s, c, 1<<40)
			if k%5 != 0 {
				settle(t, s, id, int64(50+k*7))
			}
		}
		var err error
		if got[i], err = s.Issues(context.Background(), "acme/agree"); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(got[0]) != fmt.Sprint(got[1]) || len(got[0]) != 3 {
		t.Errorf("sqlite %v\npostgres %v", got[0], got[1])
	}
}

// admitAll admits every call.
func admitAll(metering.Pending) *metering.Refusal { return nil }

// benchSpent is what a benchmark's call spent.
var benchSpent = Call{Issue: iss, Input: 40, Output: 20, Tokens: 60, Cost: 3, UsageKnown: true, RequestID: "req", Finished: time.Unix(1790000001, 0)}

// benchStore is a SQLite store of the benchmark's own, closed when it ends.
func benchStore(b *testing.B) *Store {
	s, err := Open(context.Background(), filepath.Join(b.TempDir(), "meter.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkReserveSettle is one call's writes, a reservation and its
// settlement, each committed alone.
func BenchmarkReserveSettle(b *testing.B) {
	s := benchStore(b)
	for b.Loop() {
		id, _, _, err := s.Reserve(context.Background(), call("inv-b", 100), admitAll)
		if err == nil {
			err = s.Settle(context.Background(), id, benchSpent)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReserveSettleLater is the store's part of calls made one after
// another, as the meter writes them: each reservation commits with the
// settlement of the call before it, queued with SettleLater.
func BenchmarkReserveSettleLater(b *testing.B) {
	s := benchStore(b)
	var waits sync.WaitGroup
	for b.Loop() {
		id, _, _, err := s.Reserve(context.Background(), call("inv-b", 100), admitAll)
		if err != nil {
			b.Fatal(err)
		}
		wait := s.SettleLater(context.Background(), id, benchSpent)
		waits.Go(func() {
			if err := wait(); err != nil {
				b.Error(err)
			}
		})
	}
	waits.Wait()
}
