// Package issuetx is the one issue transaction: read the live issue,
// decide, write with compare-and-swap. A lost race (409) or a stale read
// means read again and decide anew, within Attempts. The action, report and
// recover call it; none keeps a retry loop of its own.
package issuetx

import (
	"context"
	"errors"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// Attempts bounds one transaction. Losing several in a row takes a burst of
// edits; giving up then loses nothing: the edit that won starts its own
// guard run, and a report can be made again with the same invocation.
const Attempts = 4

// Attempt is one attempt of a transaction, numbered from 1.
type Attempt struct{ N int }

// Last: no retry, so decide on stale reads; a lost race fails.
func (a Attempt) Last() bool { return a.N >= Attempts }

// ErrStale: the next attempt reads again.
var ErrStale = errors.New("stale read")

// Stale is ErrStale with the reason, for the log.
func Stale(why string) error { return &stale{why} }

type stale struct{ why string }

func (s *stale) Error() string        { return s.why }
func (s *stale) Is(target error) bool { return target == ErrStale }

// Again: a lost write race or a stale read asks another attempt.
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
