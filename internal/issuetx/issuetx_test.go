package issuetx

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/gns-guard/gns-guard/internal/issues"
)

func TestRun(t *testing.T) {
	conflict := fmt.Errorf("PATCH /repos/acme/app/issues/7: %w", issues.ErrConflict)
	other := errors.New("the server is down")
	for _, tt := range []struct {
		name  string
		errs  []error // what each attempt returns; past the list, nil
		calls int
		want  error
	}{
		{"a race lost every time", []error{conflict, conflict, conflict, conflict, conflict}, Attempts, conflict},
		{"a stale read, then a write that lands", []error{Stale("the ledger is newer than the body")}, 2, nil},
		{"a race lost, then won", []error{conflict, conflict}, 3, nil},
		{"another error ends it at once", []error{other}, 1, other},
		{"a stale read on the last attempt ends it", []error{Stale("a"), Stale("b"), Stale("c"), Stale("d")}, Attempts, ErrStale},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			var told []int
			err := Run(context.Background(), func(_ context.Context, a Attempt) error {
				calls++
				if a.N != calls || a.Last() != (calls == Attempts) {
					t.Errorf("attempt %d numbered %d (last %v)", calls, a.N, a.Last())
				}
				if calls <= len(tt.errs) {
					return tt.errs[calls-1]
				}
				return nil
			}, func(next Attempt, why error) {
				told = append(told, next.N)
				if !Again(why) {
					t.Errorf("told %v, which asks for no new attempt", why)
				}
			})
			if calls != tt.calls || !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("%d attempts, %v; want %d, %v", calls, err, tt.calls, tt.want)
			}
			if len(told) != calls-1 {
				t.Errorf("told before %v attempts; %d were made", told, calls)
			}
		})
	}
}

// A cancelled run makes no further attempt.
func TestRunStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := Run(ctx, func(context.Context, Attempt) error {
		calls++
		cancel()
		return Stale("again")
	}, nil)
	if calls != 1 || !errors.Is(err, context.Canceled) {
		t.Errorf("%d attempts, %v", calls, err)
	}
}
