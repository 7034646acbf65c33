package meterstore

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	_ "modernc.org/sqlite" // the embedded store: pure Go, so the image stays static (docs/choices.md)
)

var sqliteSchema = []string{
	`CREATE TABLE IF NOT EXISTS meter_calls (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		repo TEXT NOT NULL, issue BIGINT NOT NULL, invocation TEXT NOT NULL,
		login TEXT NOT NULL, agent TEXT NOT NULL, model TEXT NOT NULL, provider TEXT NOT NULL, endpoint TEXT NOT NULL,
		input BIGINT NOT NULL DEFAULT 0, cached BIGINT NOT NULL DEFAULT 0, output BIGINT NOT NULL DEFAULT 0, reasoning BIGINT NOT NULL DEFAULT 0,
		tokens BIGINT NOT NULL, cost BIGINT NOT NULL, worst BIGINT NOT NULL,
		usage_known BOOLEAN NOT NULL, settled BOOLEAN NOT NULL, request_id TEXT,
		started BIGINT NOT NULL, finished BIGINT)`,
	`CREATE INDEX IF NOT EXISTS meter_calls_issue ON meter_calls (repo, issue, invocation)`,
	`CREATE TABLE IF NOT EXISTS meter_totals (repo TEXT NOT NULL, issue BIGINT NOT NULL, invocation TEXT NOT NULL,
		settled_tokens BIGINT NOT NULL, inflight_tokens BIGINT NOT NULL, cost BIGINT NOT NULL, PRIMARY KEY (repo, issue, invocation))`,
	`CREATE TABLE IF NOT EXISTS meter_reported (repo TEXT NOT NULL, issue BIGINT NOT NULL, invocation TEXT NOT NULL,
		tokens BIGINT NOT NULL, PRIMARY KEY (repo, issue, invocation))`,
	`CREATE TABLE IF NOT EXISTS meter_issues (repo TEXT NOT NULL, issue BIGINT NOT NULL, base BIGINT NOT NULL, PRIMARY KEY (repo, issue))`,
}

// openSQLite opens (or creates) the SQLite file at path: write-ahead log,
// each transaction taking the write lock at its start, one connection,
// so admissions run one at a time.
func openSQLite(ctx context.Context, path string) (*Store, error) {
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open the store %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	s := &Store{db: db, dialect: dialect{name: "sqlite", schema: sqliteSchema}}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("the store %s: %w", path, err)
	}
	return s, nil
}
