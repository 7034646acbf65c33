package cli

import (
	"context"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/live"
)

// refuseUnjudged is live's refusal of a body the guard has not judged,
// on the verb's clock.
func refuseUnjudged(ctx context.Context, verb string, rd *live.Reader, s *live.Snapshot, cfg config.Config, env Env) error {
	return rd.RefuseUnjudged(ctx, verb, s, cfg, env.Now())
}

// awaitGuard is live's wait for the guard's first run on the issue.
func awaitGuard(verb string, s *live.Snapshot, parsed checkpoint.Result) error {
	return live.AwaitGuard(verb, s, parsed)
}
