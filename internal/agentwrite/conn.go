package agentwrite

import (
	"context"
	"fmt"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// Conn is what a writer works through on every attempt.
type Conn struct {
	Reader *live.Reader
	Client port.Forge
	// Config is the configuration the guard judges the issue with.
	Config config.Config
	// Counter counts tokens in the configured encoding (Report only).
	Counter *tokens.Counter
	// Self is the token's user, who authors the writes.
	Self string
	// Now is the clock.
	Now func() time.Time
}

// AwaitGuard refuses, for now, a body that still holds the issue
// template's placeholder issue: 0 while the guard has not run on it.
// Its first run sets the number. Exit 3: try again later.
func AwaitGuard(verb string, s *live.Snapshot, parsed checkpoint.Result) error {
	n := s.Issue.Number
	if n == 0 || s.Status != nil || !parsed.HoldsPlaceholder() {
		return nil
	}
	return &exitcode.CannotRunError{Err: fmt.Errorf("%s: issue #%d: the checkpoint still holds the issue template's placeholder issue: 0, "+
		"and the guard has not run on the issue yet: its first run sets the number (its status comment says so). "+
		"Wait for that run, then run %s again", verb, n, verb)}
}

// RefuseUnjudged refuses (exit 1) to build on a body the guard has not
// judged for longer than unjudged-grace: a guard switched off must not go
// unnoticed (docs/contract.md#4b-the-trusted-ledger).
func RefuseUnjudged(ctx context.Context, verb string, rd *live.Reader, s *live.Snapshot, cfg config.Config, now time.Time) error {
	if s != nil && s.Status == nil && s.Unreached && ledger.Unrecorded(s.Issue, "", now, cfg.UnjudgedGrace) != nil {
		// The status comment is not among the comments read: look
		// for it as the guard does before taking it for missing.
		deep, err := rd.Read(ctx, s.Issue.Number, live.ReadOptions{Window: cfg.RecentWindow()})
		if err != nil {
			return err
		}
		s = deep
	}
	u := rd.Unjudged(ctx, s, cfg, now)
	if u == nil {
		return nil
	}
	return &exitcode.ViolationError{Err: fmt.Errorf("%s: %s", verb, u.Why(s.Issue.Number, cfg.UnjudgedGrace))}
}
