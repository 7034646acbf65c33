package meterstore

import (
	"context"
	"database/sql"
	"fmt"

	_ "github.com/lib/pq" // PostgreSQL: pure Go and small (docs/choices.md)
)

// openPostgres connects to the database at url. Meters sharing it admit
// calls of one issue one at a time: a transaction-scoped advisory lock
// on the issue.
func openPostgres(ctx context.Context, url string) (*Store, error) {
	db, err := sql.Open("postgres", url)
	if err != nil {
		return nil, fmt.Errorf("open the PostgreSQL store: %w", err)
	}
	db.SetMaxOpenConns(16)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to the PostgreSQL store: %w", err)
	}
	s := &Store{db: db, dialect: dialect{name: "postgres", serial: "BIGSERIAL PRIMARY KEY", numbered: true,
		lock:        `SELECT pg_advisory_xact_lock(hashtext($1))`,
		lockNumbers: `SELECT DISTINCT hashtext(k) AS n FROM unnest(string_to_array($1, E'\n')) AS k ORDER BY n`,
		lockNumber:  `SELECT pg_advisory_xact_lock($1::bigint)`}}
	// Meters starting together would both create the tables: lock first.
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to the PostgreSQL store: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(7426001)`); err != nil {
		db.Close()
		return nil, fmt.Errorf("lock the PostgreSQL store: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(7426001)`) //nolint:errcheck // released at disconnect anyway
	for _, stmt := range s.dialect.schema() {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			db.Close()
			return nil, fmt.Errorf("create the meter's tables (postgres): %w", err)
		}
	}
	if err := s.prepareAll(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}
