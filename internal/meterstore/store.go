package meterstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gns-guard/gns-guard/internal/metering"
)

// Issue names an issue. Repo is the repository's Gitea id
// (meter.RepoKey), so every spelling of its name shares one budget.
type Issue struct {
	Repo   string
	Number int64
}

// key is the issue's lock key (PostgreSQL).
func (i Issue) key() string { return i.Repo + "#" + strconv.FormatInt(i.Number, 10) }

// Call is one call's row.
type Call struct {
	ID                               int64
	Issue                            Issue
	Invocation, Login, Agent         string
	Model, Provider, Endpoint        string
	Input, Cached, Output, Reasoning int64
	// Tokens is the charge: usage, else the worst case (in flight, or
	// usage unread).
	Tokens int64
	Cost   int64
	// Worst is its worst case; UsageKnown says the answer carried its
	// usage; Settled, that the call ended.
	Worst      int64
	UsageKnown bool
	Settled    bool
	RequestID  string
	Started    time.Time
	Finished   time.Time
}

// Totals sum an invocation's calls.
type Totals struct {
	Calls                                    int64
	Tokens, Input, Cached, Output, Reasoning int64
	Cost                                     int64
	Login, Agent                             string
	// InFlight counts unsettled calls. WorstCase is the part of Tokens
	// charged at the worst case: usage unread, or in flight.
	InFlight, WorstCase int64
}

// IssueTotals sum an issue's calls, for status.
type IssueTotals struct {
	Issue  Issue
	Calls  int64
	Tokens int64
	Cost   int64
}

// Decide is admission, run in the store's transaction; a refusal
// reserves nothing.
type Decide func(metering.Pending) *metering.Refusal

// Store keeps the meter's calls.
type Store struct {
	db      *sql.DB
	dialect dialect
	stmts   sync.Map // query → *sql.Stmt, prepared once
	w       writer   // the queue of reservations and settlements
	local   *local   // SQLite's writer connection; nil with PostgreSQL
}

// querier runs a write's statements: a PostgreSQL transaction, or
// SQLite's writer connection inside the transaction it began.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// schema is the tables in common SQL; SERIAL_ID is the dialect's
// auto-numbered key.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS meter_calls (
		id SERIAL_ID,
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
	`CREATE TABLE IF NOT EXISTS meter_invocations (id SERIAL_ID,
		repo TEXT NOT NULL, issue BIGINT NOT NULL, invocation TEXT NOT NULL, parent TEXT NOT NULL, agent TEXT NOT NULL, login TEXT NOT NULL,
		depth BIGINT NOT NULL, estimate BIGINT NOT NULL, opened BIGINT NOT NULL, UNIQUE (repo, issue, invocation))`,
}

// dialect is what differs between SQLite and PostgreSQL.
type dialect struct {
	name string
	// serial is the column type of an auto-numbered primary key.
	serial string
	// lock takes the issue's lock (PostgreSQL; SQLite serializes writers).
	lock string
	// lockNumbers sorts the lock numbers of issue keys, one a line;
	// lockNumber takes one.
	lockNumbers, lockNumber string
	// numbered says placeholders are $1, $2, ...
	numbered bool
	// local says the database is a file (SQLite).
	local bool
}

// schema is the tables in the dialect's SQL.
func (d dialect) schema() []string {
	out := make([]string, len(schema))
	for i, stmt := range schema {
		out[i] = strings.ReplaceAll(stmt, "SERIAL_ID", d.serial)
	}
	return out
}

// Open opens the store at dsn: a postgres:// or postgresql:// URL, else
// a SQLite file path.
func Open(ctx context.Context, dsn string) (*Store, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return openPostgres(ctx, dsn)
	}
	return openSQLite(ctx, dsn)
}

// Close closes the store.
func (s *Store) Close() error {
	s.stop()
	s.stmts.Range(func(_, st any) bool { st.(*sql.Stmt).Close(); return true })
	if s.local != nil {
		s.local.close()
	}
	return s.db.Close()
}

// Kind is "sqlite" or "postgres".
func (s *Store) Kind() string { return s.dialect.name }

// callStatements are every call's statements, prepared once.
var callStatements = []string{qInsertCall, qPending, qAddTotals, qSettleTotals, qSettleCall}

// prepareAll prepares every call's statements: PostgreSQL's on the pool,
// SQLite's on its writer connection.
func (s *Store) prepareAll(ctx context.Context) error {
	if s.dialect.local {
		l, err := openLocal(ctx, s.db)
		if err != nil {
			return fmt.Errorf("prepare the meter's statements (%s): %w", s.dialect.name, err)
		}
		s.local = l
		return nil
	}
	for _, q := range callStatements {
		p, err := s.db.PrepareContext(ctx, s.q(q))
		if err != nil {
			return fmt.Errorf("prepare the meter's statements (%s): %w", s.dialect.name, err)
		}
		s.stmts.Store(q, p)
	}
	return nil
}

// The statements of every call, prepared when the store opens.
const (
	qInsertCall = `INSERT INTO meter_calls (repo, issue, invocation, login, agent, model, provider, endpoint, ` +
		`tokens, cost, worst, settled, usage_known, started)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, FALSE, FALSE, ?) RETURNING id`
	qPending = `SELECT t.settled_tokens, t.inflight_tokens, t.cost, COALESCE(r.tokens, 0)
		FROM meter_totals t LEFT JOIN meter_reported r ON r.repo = t.repo AND r.issue = t.issue AND r.invocation = t.invocation
		WHERE t.repo = ? AND t.issue = ?`
	qAddTotals = `INSERT INTO meter_totals (repo, issue, invocation, settled_tokens, inflight_tokens, cost) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (repo, issue, invocation) DO UPDATE SET settled_tokens = meter_totals.settled_tokens + excluded.settled_tokens,
		inflight_tokens = meter_totals.inflight_tokens + excluded.inflight_tokens, cost = meter_totals.cost + excluded.cost`
	// qSettleTotals moves an unsettled call's invocation totals by spent
	// less reserved, before the row settles: no read of the row first.
	// Subqueries, not UPDATE ... FROM, which costs SQLite a temporary table
	// a statement.
	qSettleTotals = `UPDATE meter_totals SET settled_tokens = settled_tokens + ?,
		inflight_tokens = inflight_tokens - (SELECT c.tokens FROM meter_calls c WHERE c.id = ?),
		cost = cost + ? - (SELECT c.cost FROM meter_calls c WHERE c.id = ?)
		WHERE repo = (SELECT c.repo FROM meter_calls c WHERE c.id = ? AND c.settled = FALSE)
		AND issue = (SELECT c.issue FROM meter_calls c WHERE c.id = ? AND c.settled = FALSE)
		AND invocation = (SELECT c.invocation FROM meter_calls c WHERE c.id = ? AND c.settled = FALSE)`
	qSettleCall = `UPDATE meter_calls SET input = ?, cached = ?, output = ?, reasoning = ?, tokens = ?, cost = ?, ` +
		`usage_known = ?, request_id = ?, finished = ?, settled = TRUE
		WHERE id = ? AND settled = FALSE`
)

// prepared is query, prepared once, for tx: parsing it per call would
// cost more than running it.
func (s *Store) prepared(ctx context.Context, tx querier, query string) (*sql.Stmt, error) {
	if s.local != nil {
		return s.local.stmt(query)
	}
	st, ok := s.stmts.Load(query)
	if !ok {
		return nil, fmt.Errorf("meterstore: a statement not prepared: %.40s", query)
	}
	return tx.(*sql.Tx).StmtContext(ctx, st.(*sql.Stmt)), nil
}

func (s *Store) q(query string) string {
	if !s.dialect.numbered {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (s *Store) migrate(ctx context.Context) error {
	for _, stmt := range s.dialect.schema() {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create the meter's tables (%s): %w", s.dialect.name, err)
		}
	}
	return s.prepareAll(ctx)
}

// Reserve admits c: under the issue's lock it sums the pending spend
// (beyond the checkpoint, calls in flight included), asks decide, and
// reserves c at its worst case. It returns after the commit: the row's id
// (0 if refused) and the pending spend before c.
func (s *Store) Reserve(ctx context.Context, c Call, decide Decide) (int64, metering.Pending, *metering.Refusal, error) {
	var id int64
	var p metering.Pending
	var ref *metering.Refusal
	err := s.write(ctx, c.Issue, func(ctx context.Context, tx querier) error {
		var err error
		id, p, ref, err = s.reserve(ctx, tx, c, decide)
		return err
	})
	if err != nil {
		return 0, p, nil, err
	}
	return id, p, ref, nil
}

// reserve is Reserve in the writer's transaction.
func (s *Store) reserve(ctx context.Context, tx querier, c Call, decide Decide) (int64, metering.Pending, *metering.Refusal, error) {
	p, err := s.pending(ctx, tx, c.Issue)
	if err != nil {
		return 0, p, nil, err
	}
	if ref := decide(p); ref != nil {
		return 0, p, ref, nil
	}
	var id int64
	ins, err := s.prepared(ctx, tx, qInsertCall)
	if err != nil {
		return 0, p, nil, err
	}
	args := []any{c.Issue.Repo, c.Issue.Number, c.Invocation, c.Login, c.Agent, c.Model, c.Provider, c.Endpoint,
		c.Worst, c.Cost, c.Worst, c.Started.UTC().UnixMilli()}
	if s.local != nil {
		var res sql.Result
		if res, err = ins.ExecContext(ctx, args...); err == nil {
			id, err = res.LastInsertId()
		}
	} else {
		err = ins.QueryRowContext(ctx, args...).Scan(&id)
	}
	if err != nil {
		return 0, p, nil, err
	}
	if err := s.addTotals(ctx, tx, c.Issue, c.Invocation, 0, c.Worst, c.Cost); err != nil {
		return 0, p, nil, err
	}
	return id, p, nil, nil
}

// pending sums an issue's spend beyond its checkpoint from the running
// totals, a few rows an issue: calls in flight at their worst, and each
// invocation's spend since the checkpoint first recorded it. Recorded is
// what those invocations had spent then.
func (s *Store) pending(ctx context.Context, tx querier, iss Issue) (metering.Pending, error) {
	var p metering.Pending
	st, err := s.prepared(ctx, tx, qPending)
	if err != nil {
		return p, err
	}
	rows, err := st.QueryContext(ctx, iss.Repo, iss.Number)
	if err != nil {
		return p, err
	}
	defer rows.Close()
	for rows.Next() {
		var settled, inflight, cost, reported int64
		if err := rows.Scan(&settled, &inflight, &cost, &reported); err != nil {
			return p, err
		}
		p.Cost += cost
		p.Tokens += inflight + max(settled-reported, 0)
		p.Recorded += reported
	}
	return p, rows.Err()
}

// addTotals moves an invocation's running totals in a transaction.
func (s *Store) addTotals(ctx context.Context, tx querier, iss Issue, inv string, settled, inflight, cost int64) error {
	st, err := s.prepared(ctx, tx, qAddTotals)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(ctx, iss.Repo, iss.Number, inv, settled, inflight, cost)
	return err
}

// Settle records what call id spent in its row and its invocation's
// totals, committed before it returns. A known c.Issue saves PostgreSQL a
// look-up.
func (s *Store) Settle(ctx context.Context, id int64, c Call) error {
	return s.settleIn(ctx, id, c, false)()
}

// SettleLater queues Settle's write and returns at once: a write queued
// after it, the next call's reservation most often, sees it and commits
// it (or it commits alone within a millisecond). wait, which must be
// called, returns after the commit.
func (s *Store) SettleLater(ctx context.Context, id int64, c Call) (wait func() error) {
	return s.settleIn(ctx, id, c, true)
}

func (s *Store) settleIn(ctx context.Context, id int64, c Call, later bool) (wait func() error) {
	if s.dialect.lock != "" && c.Issue.Repo == "" {
		err := s.db.QueryRowContext(ctx, s.q(`SELECT repo, issue FROM meter_calls WHERE id = ?`), id).Scan(&c.Issue.Repo, &c.Issue.Number)
		if errors.Is(err, sql.ErrNoRows) {
			err = notInFlight(id)
		}
		if err != nil {
			return func() error { return err }
		}
	}
	return s.enqueue(ctx, c.Issue, later, func(ctx context.Context, tx querier) error { return s.settle(ctx, tx, id, c) })
}

// notInFlight settles a call not in flight: it writes nothing, and its
// batch commits.
type notInFlight int64

func (id notInFlight) Error() string { return fmt.Sprintf("call %d is not in flight", int64(id)) }

// settle is Settle in the writer's transaction.
func (s *Store) settle(ctx context.Context, tx querier, id int64, c Call) error {
	totals, err := s.prepared(ctx, tx, qSettleTotals)
	if err != nil {
		return err
	}
	res, err := totals.ExecContext(ctx, c.Tokens, id, c.Cost, id, id, id, id)
	if err != nil {
		return err
	}
	switch n, err := res.RowsAffected(); {
	case err != nil:
		return err
	case n == 0:
		return notInFlight(id)
	}
	upd, err := s.prepared(ctx, tx, qSettleCall)
	if err != nil {
		return err
	}
	_, err = upd.ExecContext(ctx,
		c.Input, c.Cached, c.Output, c.Reasoning, c.Tokens, c.Cost, c.UsageKnown, c.RequestID, c.Finished.UTC().UnixMilli(), id)
	return err
}

// MarkReported records that budget.consumed holds these invocations'
// spend so far; what they spend after is pending again. The first mark
// stands. It returns the issue's base (metering.Standing.Base), kept at
// its first mark: consumed, less what its marked invocations had spent.
func (s *Store) MarkReported(ctx context.Context, iss Issue, consumed int64, invocations []string) (int64, error) {
	err := s.write(ctx, iss, func(ctx context.Context, tx querier) error {
		q := `INSERT INTO meter_issues (repo, issue, base)
			VALUES (?, ?, ? - COALESCE((SELECT SUM(tokens) FROM meter_reported WHERE repo = ? AND issue = ?), 0))
			ON CONFLICT (repo, issue) DO NOTHING`
		if _, err := tx.ExecContext(ctx, s.q(q), iss.Repo, iss.Number, consumed, iss.Repo, iss.Number); err != nil {
			return err
		}
		for _, inv := range invocations {
			q := `INSERT INTO meter_reported (repo, issue, invocation, tokens)
				VALUES (?, ?, ?, COALESCE((SELECT settled_tokens FROM meter_totals WHERE repo = ? AND issue = ? AND invocation = ?), 0))
				ON CONFLICT (repo, issue, invocation) DO NOTHING`
			if _, err := tx.ExecContext(ctx, s.q(q), iss.Repo, iss.Number, inv, iss.Repo, iss.Number, inv); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	var base int64
	err = s.db.QueryRowContext(ctx, s.q(`SELECT base FROM meter_issues WHERE repo = ? AND issue = ?`), iss.Repo, iss.Number).Scan(&base)
	return base, err
}

// Invocation sums an invocation's calls.
func (s *Store) Invocation(ctx context.Context, iss Issue, inv string) (Totals, error) {
	var t Totals
	var login, agent sql.NullString
	err := s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*), COALESCE(SUM(tokens),0), COALESCE(SUM(input),0), `+
		`COALESCE(SUM(cached),0), COALESCE(SUM(output),0),
		COALESCE(SUM(reasoning),0), COALESCE(SUM(cost),0), MIN(login), MIN(agent), COALESCE(SUM(CASE WHEN settled THEN 0 ELSE 1 END),0),
		COALESCE(SUM(CASE WHEN usage_known THEN 0 ELSE tokens END),0)
		FROM meter_calls WHERE repo = ? AND issue = ? AND invocation = ?`), iss.Repo, iss.Number, inv).
		Scan(&t.Calls, &t.Tokens, &t.Input, &t.Cached, &t.Output, &t.Reasoning, &t.Cost, &login, &agent, &t.InFlight, &t.WorstCase)
	t.Login, t.Agent = login.String, agent.String
	return t, err
}

// OpenPrefix starts the invocations the meter names, for base URLs that
// name none.
const OpenPrefix = "open-"

// Current is login's latest invocation the meter named on the issue (""
// if none), and whether the checkpoint recorded it.
func (s *Store) Current(ctx context.Context, iss Issue, login string) (inv string, reported bool, err error) {
	err = s.db.QueryRowContext(ctx, s.q(`SELECT invocation FROM meter_calls WHERE repo = ? AND issue = ? AND login = ? AND invocation LIKE ?
		ORDER BY id DESC LIMIT 1`), iss.Repo, iss.Number, login, OpenPrefix+"%").Scan(&inv)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	var n int
	err = s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM meter_reported WHERE repo = ? AND issue = ? AND invocation = ?`),
		iss.Repo, iss.Number, inv).Scan(&n)
	return inv, n > 0, err
}

// Open names login's invocation when the URL names none: the current one
// until the checkpoint records it, then the next.
func (s *Store) Open(ctx context.Context, iss Issue, login string) (string, error) {
	inv, reported, err := s.Current(ctx, iss, login)
	if err != nil || inv != "" && !reported {
		return inv, err
	}
	seq := 1
	if n, err := strconv.Atoi(inv[strings.LastIndex(inv, "-")+1:]); inv != "" && err == nil {
		seq = n + 1
	}
	return fmt.Sprintf("%s%s-%d", OpenPrefix, login, seq), nil
}

// Spent sums one invocation's calls on an issue.
type Spent struct {
	Invocation, Login, Agent string
	Calls, Tokens, InFlight  int64
	// First and Last are its first and last calls' starts.
	First, Last time.Time
}

// Statement sums an issue's calls by invocation, ordered by first call,
// and gives its base; seen is false if the meter never read the issue.
func (s *Store) Statement(ctx context.Context, iss Issue) (base int64, seen bool, out []Spent, err error) {
	err = s.db.QueryRowContext(ctx, s.q(`SELECT base FROM meter_issues WHERE repo = ? AND issue = ?`), iss.Repo, iss.Number).Scan(&base)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		err = nil
	case err != nil:
		return 0, false, nil, err
	default:
		seen = true
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT invocation, MIN(login), MIN(agent), COUNT(*), SUM(tokens),
		SUM(CASE WHEN settled THEN 0 ELSE 1 END), MIN(started), MAX(started)
		FROM meter_calls WHERE repo = ? AND issue = ? GROUP BY invocation ORDER BY MIN(started), invocation`), iss.Repo, iss.Number)
	if err != nil {
		return 0, false, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var l Spent
		var first, last int64
		if err := rows.Scan(&l.Invocation, &l.Login, &l.Agent, &l.Calls, &l.Tokens, &l.InFlight, &first, &last); err != nil {
			return 0, false, nil, err
		}
		l.First, l.Last = time.UnixMilli(first).UTC(), time.UnixMilli(last).UTC()
		out = append(out, l)
	}
	return base, seen, out, rows.Err()
}

// Issues sums the calls of every issue of repo.
func (s *Store) Issues(ctx context.Context, repo string) ([]IssueTotals, error) {
	rows, err := s.db.QueryContext(ctx,
		s.q(`SELECT issue, COUNT(*), SUM(tokens), SUM(cost) FROM meter_calls WHERE repo = ? GROUP BY issue ORDER BY issue`), repo)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []IssueTotals
	for rows.Next() {
		t := IssueTotals{Issue: Issue{Repo: repo}}
		if err := rows.Scan(&t.Issue.Number, &t.Calls, &t.Tokens, &t.Cost); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Calls lists an issue's calls, oldest first.
func (s *Store) Calls(ctx context.Context, iss Issue) ([]Call, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, invocation, login, agent, model, provider, endpoint, `+
		`input, cached, output, reasoning, tokens, cost, worst, usage_known, settled, request_id, started, finished
		FROM meter_calls WHERE repo = ? AND issue = ? ORDER BY id`), iss.Repo, iss.Number)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Call
	for rows.Next() {
		c := Call{Issue: iss}
		var started, finished sql.NullInt64
		var reqID sql.NullString
		if err := rows.Scan(&c.ID, &c.Invocation, &c.Login, &c.Agent, &c.Model, &c.Provider, &c.Endpoint, &c.Input, &c.Cached, &c.Output, &c.Reasoning,
			&c.Tokens, &c.Cost, &c.Worst, &c.UsageKnown, &c.Settled, &reqID, &started, &finished); err != nil {
			return nil, err
		}
		c.RequestID = reqID.String
		c.Started = time.UnixMilli(started.Int64).UTC()
		if finished.Valid {
			c.Finished = time.UnixMilli(finished.Int64).UTC()
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Ping checks the store answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }
