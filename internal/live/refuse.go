package live

import (
	"context"
	"fmt"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// RefuseUnjudged refuses (exit 1) to build on a body the guard has not
// judged for longer than unjudged-grace: a guard switched off must not go
// unnoticed by the agents that work on its issues
// (docs/contract.md#4b-the-trusted-ledger).
func (r *Reader) RefuseUnjudged(ctx context.Context, verb string, s *Snapshot, cfg config.Config, now time.Time) error {
	if s != nil && s.Status == nil && s.Unreached && ledger.Unrecorded(s.Issue, "", now, cfg.UnjudgedGrace) != nil {
		// The status comment is not among the comments read: look for
		// it as the guard does before taking it for missing.
		deep, err := r.Read(ctx, s.Issue.Number, ReadOptions{Window: cfg.RecentWindow()})
		if err != nil {
			return err
		}
		s = deep
	}
	u := r.Unjudged(ctx, s, cfg, now)
	if u == nil {
		return nil
	}
	return &exitcode.ViolationError{Err: fmt.Errorf("%s: %s", verb, u.Why(s.Issue.Number, cfg.UnjudgedGrace))}
}

// AwaitGuard refuses, for now, a body that still holds the issue
// template's placeholder issue: 0 while the guard has not run on the issue
// (it has no status comment): its first run sets the number, and the verb
// works once it has. Exit 3, as for anything to try again later.
func AwaitGuard(verb string, s *Snapshot, parsed checkpoint.Result) error {
	n := s.Issue.Number
	if n == 0 || s.Status != nil || !parsed.HoldsPlaceholder() {
		return nil
	}
	return &exitcode.CannotRunError{Err: fmt.Errorf("%s: issue #%d: the checkpoint still holds the issue template's placeholder issue: 0, "+
		"and the guard has not run on the issue yet: its first run sets the number (its status comment says so). Wait for that run, then "+
		"run %s again", verb, n, verb)}
}
