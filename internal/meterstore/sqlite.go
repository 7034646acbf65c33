package meterstore

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	_ "modernc.org/sqlite" // pure Go, so the image stays static (docs/choices.md)
)

// openSQLite opens or creates the file at path. Two connections: the
// writer's, whose immediate transactions admit calls one at a time, and
// one for reads.
func openSQLite(ctx context.Context, path string) (*Store, error) {
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open the store %s: %w", path, err)
	}
	db.SetMaxOpenConns(2)
	s := &Store{db: db, dialect: dialect{name: "sqlite", serial: "INTEGER PRIMARY KEY", local: true}}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("the store %s: %w", path, err)
	}
	return s, nil
}
