// Package issuetx is the one issue transaction: read the live issue,
// decide on what was read, write with compare-and-swap. When the write
// loses a race (Gitea answers 409: the body changed since the read) or the
// read proves stale, the next attempt reads again and decides anew, within
// Attempts. The action's run, report and recover are its callers; none
// keeps a retry loop of its own.
package issuetx

import (
	"context"
	"errors"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// Attempts bounds the attempts of one transaction. An attempt is lost only
// to a write that landed between its read and its own write, so losing
// several in a row takes a burst of concurrent edits; rather than chase it
// for ever, the writer gives up after Attempts and fails. Nothing is lost
// by that: the edit that won starts a guard run of its own, which reads
// the issue anew, and a report can be made again with the same invocation
// (it is idempotent per invocation).
const Attempts = 4

// Attempt is one attempt of a transaction, numbered from 1.
type Attempt struct{ N int }

// Last says no attempt follows this one: a stale read is decided on as it
// is, and a lost race fails the transaction.
func (a Attempt) Last() bool { return a.N >= Attempts }

// ErrStale marks an attempt whose read cannot be decided on: the next
// attempt reads again.
var ErrStale = errors.New("stale read")

// Stale is ErrStale with the reason, for the log.
func Stale(why string) error { return &stale{why} }

type stale struct{ why string }

func (s *stale) Error() string        { return s.why }
func (s *stale) Is(target error) bool { return target == ErrStale }

// Again says an attempt's error asks for another attempt: its write lost a
// race, or its read was stale.
func Again(err error) bool {
	return errors.Is(err, issues.ErrConflict) || errors.Is(err, ErrStale)
}

// Run makes attempts until one ends in anything but Again, or the last
// ends, and returns its error. Before each new attempt, again is told its
// number and why (nil: nothing to tell).
func Run(ctx context.Context, attempt func(context.Context, Attempt) error, again func(next Attempt, why error)) error {
	for a := (Attempt{N: 1}); ; a.N++ {
		err := attempt(ctx, a)
		if !Again(err) || a.Last() {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if again != nil {
			again(Attempt{N: a.N + 1}, err)
		}
	}
}
