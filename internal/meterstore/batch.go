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

// Group commit: the reservations and settlements queued while one
// transaction commits go in the next, run in order, and commit once. A
// caller returns after the commit that holds its write, so a call is
// reserved before it goes upstream and settled before its answer ends,
// as with a transaction each; a transaction costs the store more than
// the writes in it. The caller that finds no commit under way commits
// itself (the leader), and hands the queue to the first caller in it:
// a lone call waits on no other goroutine.

// maxBatch bounds the writes one transaction commits.
const maxBatch = 128

// batchTimeout bounds one transaction on a server: a store that hangs
// fails the calls waiting on it, and they are refused.
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

// write queues run for the next transaction and waits for its commit. It
// waits even when ctx ends: a write begun commits, and its caller must
// know.
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

// lead commits the queue's first writes, then hands the rest to the
// first caller left in it.
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

// commit runs batch in one transaction and answers each caller. When the
// transaction fails, each write runs again alone, so that one failing
// write fails no other.
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

// answer tells o's caller how its write ended: err when its transaction
// failed, else its own answer.
func (o *op) answer(err error) {
	if err == nil {
		err = o.err
	}
	o.done <- err
}

// transact runs batch's writes in order in one transaction: each sees
// those before it, so admission counts the reservations of its batch.
// An error it returns undid every write.
func (s *Store) transact(batch []*op) error {
	// SQLite's own busy_timeout bounds a file's transaction; a context
	// that can end costs its driver a goroutine a statement.
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
