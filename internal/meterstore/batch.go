package meterstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"
)

// Group commit: one writer goroutine takes the reservations and
// settlements queued while it committed the last ones, runs them in
// order in one transaction, and commits once. Each caller returns after
// the commit that holds its write, so a call is reserved before it goes
// upstream and settled before its answer ends, as with a transaction
// each; a transaction costs the store more than the writes in it.

// maxBatch bounds the writes one transaction commits.
const maxBatch = 128

// batchTimeout bounds one transaction: a store that hangs fails the
// calls waiting on it, and they are refused.
const batchTimeout = 30 * time.Second

// op is one write waiting for the writer.
type op struct {
	ctx   context.Context // the caller's: gone before its turn, it writes nothing
	issue Issue           // locked before the writes (PostgreSQL)
	run   func(context.Context, *sql.Tx) error
	err   error
	done  chan error
}

// writer is the store's one writer of reservations and settlements.
type writer struct {
	mu      sync.RWMutex // held to queue; Close takes it whole
	closed  bool
	queue   chan *op
	stopped chan struct{}
}

// errClosed is a write after Close.
var errClosed = errors.New("meterstore: the store is closed")

// start starts the writer.
func (s *Store) start() {
	s.w = &writer{queue: make(chan *op, 4*maxBatch), stopped: make(chan struct{})}
	go s.writeLoop()
}

// stop lets the writer commit what is queued, then ends it.
func (s *Store) stop() {
	if s.w == nil {
		return
	}
	s.w.mu.Lock()
	if !s.w.closed {
		s.w.closed = true
		close(s.w.queue)
	}
	s.w.mu.Unlock()
	<-s.w.stopped
}

// write queues run for the writer's next transaction and waits for its
// commit. It waits even when ctx ends: a write the writer has begun
// commits, and its caller must know.
func (s *Store) write(ctx context.Context, iss Issue, run func(context.Context, *sql.Tx) error) error {
	o := &op{ctx: ctx, issue: iss, run: run, done: make(chan error, 1)}
	s.w.mu.RLock()
	if s.w.closed {
		s.w.mu.RUnlock()
		return errClosed
	}
	s.w.queue <- o
	s.w.mu.RUnlock()
	return <-o.done
}

// writeLoop commits the queue, as many writes at once as are waiting.
func (s *Store) writeLoop() {
	defer close(s.w.stopped)
	batch := make([]*op, 0, maxBatch)
	for o := range s.w.queue {
		batch = append(batch[:0], o)
	more:
		for len(batch) < maxBatch {
			select {
			case o, ok := <-s.w.queue:
				if !ok {
					break more
				}
				batch = append(batch, o)
			default:
				break more
			}
		}
		s.commit(batch)
		clear(batch)
	}
}

// commit runs batch in one transaction and answers each caller. When the
// transaction fails, each write runs again alone, so that one failing
// write fails no other.
func (s *Store) commit(batch []*op) {
	err := s.transact(batch)
	if err != nil && len(batch) > 1 {
		for _, o := range batch {
			o.done <- s.transact([]*op{o})
		}
		return
	}
	for _, o := range batch {
		o.done <- errors.Join(err, o.err)
	}
}

// transact runs batch's writes in order in one transaction: each sees
// those before it, so admission counts the reservations of its batch.
// An error it returns undid every write.
func (s *Store) transact(batch []*op) error {
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

// lockIssues takes the locks of the issues batch writes (PostgreSQL), in
// the order of their lock numbers: two meters' transactions that write
// the same issues never wait on each other in a circle.
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
