package meterstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
)

// local is SQLite's writer: one connection of its own, every write of
// the queue's in a transaction it begins and commits with statements
// prepared once. Reads take the pool's other connection: under the
// write-ahead log they wait for no write.
type local struct {
	db    *sql.DB
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

// The writer's own statements, beside callStatements.
const (
	qBegin    = `BEGIN IMMEDIATE`
	qCommit   = `COMMIT`
	qRollback = `ROLLBACK`
)

// openLocal takes a connection of db for the writes and prepares their
// statements on it.
func openLocal(ctx context.Context, db *sql.DB) (*local, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	l := &local{db: db, conn: conn, stmts: map[string]*sql.Stmt{}}
	for _, q := range append([]string{qBegin, qCommit, qRollback}, callStatements...) {
		// RETURNING costs SQLite a temporary table; the id is the row's.
		st, err := conn.PrepareContext(ctx, strings.TrimSuffix(q, " RETURNING id"))
		if err != nil {
			l.close()
			return nil, err
		}
		l.stmts[q] = st
	}
	return l, nil
}

func (l *local) stmt(query string) (*sql.Stmt, error) {
	if st, ok := l.stmts[query]; ok {
		return st, nil
	}
	return nil, fmt.Errorf("meterstore: a statement not prepared: %.40s", query)
}

// transact runs batch in one transaction of the writer's connection. It
// has no deadline: SQLite's busy_timeout bounds it, and a cancellable
// context costs its driver a goroutine a statement.
func (l *local) transact(batch []*op) (err error) {
	ctx := context.Background()
	if err := l.begin(ctx); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_, _ = l.stmts[qRollback].ExecContext(ctx) // none left after a failed COMMIT
		}
	}()
	if err := runAll(ctx, l.conn, batch); err != nil {
		return err
	}
	_, err = l.stmts[qCommit].ExecContext(ctx)
	return err
}

// begin begins a transaction, on a new connection if the writer's is
// gone, as the pool would give one.
func (l *local) begin(ctx context.Context) error {
	_, err := l.stmts[qBegin].ExecContext(ctx)
	if !errors.Is(err, sql.ErrConnDone) && !errors.Is(err, driver.ErrBadConn) {
		return err
	}
	fresh, err := openLocal(ctx, l.db)
	if err != nil {
		return err
	}
	l.close()
	*l = *fresh
	_, err = l.stmts[qBegin].ExecContext(ctx)
	return err
}

func (l *local) close() {
	for _, st := range l.stmts {
		st.Close()
	}
	l.conn.Close()
}
