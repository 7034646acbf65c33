package meterstore

import (
	"context"
	"database/sql"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// Group commit (docs/meter.md#performance): writes queued during one
// commit share the next transaction, in order. A caller returns after the
// commit that holds its write. The caller finding no commit under way
// leads, so a lone call waits on no other goroutine. A settlement waits
// for the next write's commit instead, settleDelay at most.

// maxBatch bounds the writes one transaction commits.
const maxBatch = 128

// batchTimeout bounds a PostgreSQL transaction: calls on a hung store are refused.
const batchTimeout = 30 * time.Second

// settleDelay is how long a settlement waits for a write to commit with.
const settleDelay = time.Millisecond

// op is one write waiting for its commit.
type op struct {
	ctx   context.Context // the caller's: gone before its turn, it writes nothing
	issue Issue           // locked before the writes (PostgreSQL)
	run   func(context.Context, querier) error
	later bool // a settlement: it leads no commit
	err   error
	done  chan error // the write's answer, or errLead
}

// writer queues the store's reservations and settlements.
type writer struct {
	mu      sync.Mutex
	queue   []*op
	leading bool        // a caller commits
	timer   *time.Timer // commits the settlements no write came to lead
	closed  bool
	writes  sync.WaitGroup
}

var (
	// errClosed is a write after Close.
	errClosed = errors.New("meterstore: the store is closed")
	// errLead tells a queued caller to commit the queue.
	errLead = errors.New("meterstore: commit the queue")
)

// stop waits for the writes queued, and takes no more.
func (s *Store) stop() {
	s.w.mu.Lock()
	s.w.closed = true
	s.w.mu.Unlock()
	s.w.writes.Wait()
}

// write queues run and waits for its commit, even after ctx ends: a
// begun write commits.
func (s *Store) write(ctx context.Context, iss Issue, run func(context.Context, querier) error) error {
	return s.enqueue(ctx, iss, false, run)()
}

// enqueue queues run and returns at once: a write queued after it runs
// after it. wait returns after its commit. A later write leads no commit:
// it waits for one, settleDelay at most.
func (s *Store) enqueue(ctx context.Context, iss Issue, later bool, run func(context.Context, querier) error) (wait func() error) {
	o := &op{ctx: ctx, issue: iss, run: run, later: later, done: make(chan error, 1)}
	w := &s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return func() error { return errClosed }
	}
	w.writes.Add(1)
	w.queue = append(w.queue, o)
	lead := !w.leading && !later
	w.leading = w.leading || lead
	if !w.leading {
		s.armLocked()
	}
	return func() error {
		if lead {
			s.lead()
		}
		for {
			if err := <-o.done; err != errLead {
				return err
			}
			s.lead()
		}
	}
}

// lead commits up to maxBatch writes, then hands the rest to the first
// caller waiting that is not a settlement.
func (s *Store) lead() {
	w := &s.w
	// The calls about to queue join this transaction.
	runtime.Gosched()
	w.mu.Lock()
	n := min(len(w.queue), maxBatch)
	batch := w.queue[:n:n]
	w.queue = w.queue[n:]
	w.mu.Unlock()
	s.commit(batch)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range w.queue {
		if !o.later {
			o.done <- errLead
			return
		}
	}
	w.leading = false
	if len(w.queue) == 0 {
		w.queue = nil
		return
	}
	s.armLocked()
}

// armLocked has the settlements queued commit alone within settleDelay
// if no write leads a commit first.
func (s *Store) armLocked() {
	if s.w.timer == nil {
		s.w.timer = time.AfterFunc(settleDelay, s.kick)
	}
}

// kick commits the settlements no write came to lead.
func (s *Store) kick() {
	w := &s.w
	w.mu.Lock()
	w.timer = nil
	idle := !w.leading && len(w.queue) > 0
	w.leading = w.leading || idle
	w.mu.Unlock()
	if idle {
		s.lead()
	}
}

// commit runs batch in one transaction. If it fails, each write runs
// again alone: a bad write fails no other.
func (s *Store) commit(batch []*op) {
	err := s.transact(batch)
	if err != nil && len(batch) > 1 {
		for _, o := range batch {
			s.answer(o, s.transact([]*op{o}))
		}
		return
	}
	for _, o := range batch {
		s.answer(o, err)
	}
}

// answer sends o's caller its transaction's error, else its own.
func (s *Store) answer(o *op, err error) {
	if err == nil {
		err = o.err
	}
	o.done <- err
	s.w.writes.Done()
}

// transact runs batch in order in one transaction, so admission counts
// its batch's reservations. An error means every write was undone.
func (s *Store) transact(batch []*op) error {
	if s.local != nil {
		return s.local.transact(batch)
	}
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	if err := s.lockIssues(ctx, tx, batch); err != nil {
		return err
	}
	if err := runAll(ctx, tx, batch); err != nil {
		return err
	}
	return tx.Commit()
}

// runAll runs batch's writes in order; a write's own error, but a
// settlement of a call not in flight, ends the batch.
func runAll(ctx context.Context, tx querier, batch []*op) error {
	for _, o := range batch {
		if o.err = o.ctx.Err(); o.err != nil {
			continue
		}
		o.err = o.run(ctx, tx)
		var nf notInFlight
		if o.err != nil && !errors.As(o.err, &nf) {
			return o.err
		}
	}
	return nil
}

// lockIssues locks batch's issues (PostgreSQL) in lock-number order, so
// two meters' transactions never deadlock.
func (s *Store) lockIssues(ctx context.Context, tx *sql.Tx, batch []*op) error {
	if s.dialect.lock == "" {
		return nil
	}
	var keys []string
	for _, o := range batch {
		if k := o.issue.key(); o.issue.Repo != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	switch len(keys) {
	case 0:
		return nil
	case 1:
		_, err := tx.ExecContext(ctx, s.dialect.lock, keys[0])
		return err
	}
	rows, err := tx.QueryContext(ctx, s.dialect.lockNumbers, strings.Join(keys, "\n"))
	if err != nil {
		return err
	}
	var numbers []int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		numbers = append(numbers, n)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	for _, n := range numbers {
		if _, err := tx.ExecContext(ctx, s.dialect.lockNumber, n); err != nil {
			return err
		}
	}
	return nil
}
