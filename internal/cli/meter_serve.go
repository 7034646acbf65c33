//go:build !nometer

package cli

import (
	"context"

	"github.com/gns-guard/gns-guard/internal/meter"
	"github.com/gns-guard/gns-guard/internal/receipt"
)

// meterBuilt says the meter is in this build.
const meterBuilt = true

// serveMeter serves the meter until ctx ends. The guard's step image is
// built without it (the nometer tag): its store drivers are most of the
// binary, and no issue event needs them.
func serveMeter(ctx context.Context, o *meterOptions, env Env, server string, key receipt.Key, metricsToken string) error {
	return meter.Run(ctx, meter.Start{
		Store: o.store, Listen: o.listen, Drain: o.drain,
		OpenAIURL: o.openaiURL, AnthropicURL: o.anthropicURL,
		OpenAIKey: env.Getenv(o.openaiKeyEnv), AnthropicKey: env.Getenv(o.anthropicEnv),
		Options: meter.Options{
			Server: server, Key: key, Scope: o.scope,
			IssueTTL: o.issueTTL, HangupRead: o.hangup, DefaultMaxTokens: o.maxTokens,
			Log: env.Stderr, Now: env.Now,
			MetricsToken: metricsToken, MetricsIssue: o.metricsIssue,
			Connect: func(server, token, owner, name string) (meter.Client, error) {
				return connectForge(server, token, owner, name)
			},
		},
	})
}
