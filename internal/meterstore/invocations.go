package meterstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/gns-guard/gns-guard/internal/metering"
)

// Opened is an invocation the gate opened.
type Opened struct {
	Invocation, Parent, Agent, Login string // Parent "" for a root
	Depth, Estimate                  int64
	Opened                           time.Time
}

// Branch is an opened invocation and what the meter charged it: tokens
// (calls in flight at their worst case), calls, calls in flight, and
// cost in millionths of a dollar.
type Branch struct {
	Opened
	Tokens, Calls, InFlight, Cost int64
}

// The statements of the gate's invocations.
const (
	qOpenedOf = `SELECT invocation, parent, agent, login, depth, estimate, opened FROM meter_invocations
		WHERE repo = ? AND issue = ? ORDER BY id`
	qOpenedOne = `SELECT invocation, parent, agent, login, depth, estimate, opened FROM meter_invocations
		WHERE repo = ? AND issue = ? AND invocation = ?`
	qInsertOpened = `INSERT INTO meter_invocations (repo, issue, invocation, parent, agent, login, depth, estimate, opened)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qTree = `SELECT o.invocation, o.parent, o.agent, o.login, o.depth, o.estimate, o.opened,
		COALESCE(t.settled_tokens + t.inflight_tokens, 0), COALESCE(t.cost, 0),
		(SELECT COUNT(*) FROM meter_calls c WHERE c.repo = o.repo AND c.issue = o.issue AND c.invocation = o.invocation),
		(SELECT COUNT(*) FROM meter_calls c WHERE c.repo = o.repo AND c.issue = o.issue AND c.invocation = o.invocation AND c.settled = FALSE)
		FROM meter_invocations o LEFT JOIN meter_totals t ON t.repo = o.repo AND t.issue = o.issue AND t.invocation = o.invocation
		WHERE o.repo = ? AND o.issue = ? ORDER BY o.id`
)

// OpenInvocation records o on iss under the issue's lock, as Reserve
// does, once decide accepts it. decide sees the issue's pending spend and
// the invocations opened on it, oldest first. A refusal writes nothing.
// An id already opened returns the stored opening, without decide: a
// retried request opens nothing twice.
func (s *Store) OpenInvocation(ctx context.Context, iss Issue, o Opened,
	decide func(p metering.Pending, tree []Opened) *metering.Refusal) (Opened, *metering.Refusal, error) {
	if o.Invocation == "" {
		return Opened{}, nil, errors.New("meterstore: an invocation to open needs an id")
	}
	o.Opened = time.UnixMilli(o.Opened.UnixMilli()).UTC() // as stored
	// It joins the writer's queue as Reserve does, not a transaction of its
	// own: the queue already takes the issue's lock and runs a failed write
	// again alone, so openings and reservations share one serialization.
	// Openings are rare; the batches they join barely grow.
	var got Opened
	var ref *metering.Refusal
	err := s.write(ctx, iss, func(ctx context.Context, tx querier) error {
		var err error
		got, ref, err = s.openInvocation(ctx, tx, iss, o, decide)
		return err
	})
	if err != nil {
		return Opened{}, nil, err
	}
	return got, ref, nil
}

// openInvocation is OpenInvocation in the writer's transaction.
func (s *Store) openInvocation(ctx context.Context, tx querier, iss Issue, o Opened,
	decide func(metering.Pending, []Opened) *metering.Refusal) (Opened, *metering.Refusal, error) {
	tree, err := scanOpened(tx.QueryContext(ctx, s.q(qOpenedOf), iss.Repo, iss.Number))
	if err != nil {
		return Opened{}, nil, err
	}
	for _, t := range tree {
		if t.Invocation == o.Invocation {
			return t, nil, nil
		}
	}
	p, err := s.pending(ctx, tx, iss)
	if err != nil {
		return Opened{}, nil, err
	}
	if ref := decide(p, tree); ref != nil {
		return Opened{}, ref, nil
	}
	_, err = tx.ExecContext(ctx, s.q(qInsertOpened), iss.Repo, iss.Number, o.Invocation, o.Parent, o.Agent, o.Login,
		o.Depth, o.Estimate, o.Opened.UnixMilli())
	if err != nil {
		return Opened{}, nil, err
	}
	return o, nil, nil
}

// OpenedInvocation is invocation inv's opening on iss, or false if the
// gate never opened it.
func (s *Store) OpenedInvocation(ctx context.Context, iss Issue, inv string) (Opened, bool, error) {
	got, err := scanOpened(s.db.QueryContext(ctx, s.q(qOpenedOne), iss.Repo, iss.Number, inv))
	if err != nil || len(got) == 0 {
		return Opened{}, false, err
	}
	return got[0], true, nil
}

// scanOpened reads the rows of qOpenedOf or qOpenedOne.
func scanOpened(rows *sql.Rows, err error) ([]Opened, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Opened
	for rows.Next() {
		var o Opened
		var at int64
		if err := rows.Scan(&o.Invocation, &o.Parent, &o.Agent, &o.Login, &o.Depth, &o.Estimate, &at); err != nil {
			return nil, err
		}
		o.Opened = time.UnixMilli(at).UTC()
		out = append(out, o)
	}
	return out, rows.Err()
}

// Tree is the invocations the gate opened on iss, oldest first, each with
// what the meter charged it.
func (s *Store) Tree(ctx context.Context, iss Issue) ([]Branch, error) {
	rows, err := s.db.QueryContext(ctx, s.q(qTree), iss.Repo, iss.Number)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Branch
	for rows.Next() {
		var b Branch
		var at int64
		if err := rows.Scan(&b.Invocation, &b.Parent, &b.Agent, &b.Login, &b.Depth, &b.Estimate, &at,
			&b.Tokens, &b.Cost, &b.Calls, &b.InFlight); err != nil {
			return nil, err
		}
		b.Opened.Opened = time.UnixMilli(at).UTC()
		out = append(out, b)
	}
	return out, rows.Err()
}
