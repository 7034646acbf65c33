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
// leads, so a lone call waits on no other goroutine.

// maxBatch bounds the writes one transaction commits.
const maxBatch = 128

// batchTimeout bounds a PostgreSQL transaction: calls on a hung store are refused.
const batchTimeout = 30 * time.Second

// op is one write waiting for its commit.
type op struct {
	ctx   context.Context // the caller's: gone before its turn, it writes nothing
	issue Issue           // locked before the writes (PostgreSQL)
	run   func(context.Context, *sql.Tx) error
	err   error
	done  chan error // the write's answer, or errLead
}

// writer queues the store's reservations and settlements.
type writer struct {
	mu      sync.Mutex
	queue   []*op
	leading bool // a caller commits
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
func (s *Store) write(ctx context.Context, iss Issue, run func(context.Context, *sql.Tx) error) error {
	o := &op{ctx: ctx, issue: iss, run: run, done: make(chan error, 1)}
	w := &s.w
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errClosed
	}
	w.writes.Add(1)
	defer w.writes.Done()
	w.queue = append(w.queue, o)
	lead := !w.leading
	w.leading = true
	w.mu.Unlock()
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

// lead commits up to maxBatch writes and hands the rest to the first
// caller waiting.
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
	if len(w.queue) == 0 {
		w.leading = false
		w.queue = nil
		return
	}
	w.queue[0].done <- errLead
}

// commit runs batch in one transaction. If it fails, each write runs
// again alone: a bad write fails no other.
func (s *Store) commit(batch []*op) {
	err := s.transact(batch)
	if err != nil && len(batch) > 1 {
		for _, o := range batch {
			o.answer(s.transact([]*op{o}))
		}
		return
	}
	for _, o := range batch {
		o.answer(err)
	}
}

// answer sends o's caller its transaction's error, else its own.
func (o *op) answer(err error) {
	if err == nil {
		err = o.err
	}
	o.done <- err
}

// transact runs batch in order in one transaction, so admission counts
// its batch's reservations. An error means every write was undone.
func (s *Store) transact(batch []*op) error {
	// SQLite's busy_timeout bounds it; a cancellable context costs its
	// driver a goroutine a statement.
	ctx := context.Background()
	if !s.dialect.local {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, batchTimeout)
		defer cancel()
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	if err := s.lockIssues(ctx, tx, batch); err != nil {
		return err
	}
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
	return tx.Commit()
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
