package cli

import (
	"context"
	"fmt"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
)

// refuseUnjudged refuses (exit 1) to build on a body the guard has not
// judged for longer than unjudged-grace: a guard switched off must not go
// unnoticed by the agents that work on its issues
// (docs/contract.md#4b-the-trusted-ledger).
func refuseUnjudged(ctx context.Context, verb string, rd *live.Reader, s *live.Snapshot, cfg config.Config, env Env) error {
	if s != nil && s.Status == nil && s.Unreached && ledger.Unrecorded(s.Issue, "", env.Now(), cfg.UnjudgedGrace) != nil {
		// The status comment is not among the comments read: look for
		// it as the guard does before taking it for missing.
		deep, err := rd.Read(ctx, s.Issue.Number, live.ReadOptions{Window: cfg.RecentWindow()})
		if err != nil {
			return err
		}
		s = deep
	}
	u := rd.Unjudged(ctx, s, cfg, env.Now())
	if u == nil {
		return nil
	}
	return &exitcode.ViolationError{Err: fmt.Errorf("%s: %s", verb, u.Why(s.Issue.Number, cfg.UnjudgedGrace))}
}
