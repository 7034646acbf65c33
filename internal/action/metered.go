package action

import (
	"context"
	"strings"

	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/meterclient"
)

// meterStatement reads the issue's signed statement at meter-url, once a
// run, with the guard's own token: meter-url comes from the settings file
// (a protected path), never from what an agent writes
// (docs/meter.md#the-issues-metered-total). Nil when no meter is set up or
// the event is a pull request's.
func (r *runner) meterStatement(ctx context.Context, s *live.Snapshot) *guard.MeterRead {
	if r.cfg.MeterURL == "" || r.cfg.MeterPublicKey == "" || r.event.IsPull || s.Issue.IsPull {
		return nil
	}
	if r.metered != nil {
		return r.metered
	}
	owner, name, _ := strings.Cut(r.repo, "/")
	st, err := meterclient.Client{Base: r.cfg.MeterURL, Token: r.token}.Statement(ctx, owner, name, s.Issue.Number)
	r.metered = &guard.MeterRead{URL: r.cfg.MeterURL, Statement: st, Err: err}
	if err != nil {
		r.log.infof("gns-guard: warning: the meter at %s could not be read: %v", r.cfg.MeterURL, err)
	}
	return r.metered
}
