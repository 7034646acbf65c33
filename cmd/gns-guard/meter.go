//go:build !nometer

package main

import (
	"context"

	"github.com/gns-guard/gns-guard/internal/cli"
	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/meter"
	"github.com/gns-guard/gns-guard/internal/receipt"
)

// The meter is wired in every build but the guard's step image (the
// nometer tag): its store drivers are most of the binary, and no issue
// event needs them.
func init() { serveMeter = runMeter }

// runMeter serves the meter the verb started, with the Gitea adapter.
func runMeter(ctx context.Context, s cli.MeterStart) error {
	key, err := receipt.NewKey(s.Secret)
	if err != nil {
		return err // the verb checked it
	}
	return meter.Run(ctx, meter.Start{
		Store: s.Store, Listen: s.Listen, Drain: s.Drain,
		OpenAIURL: s.OpenAIURL, AnthropicURL: s.AnthropicURL, OpenAIKey: s.OpenAIKey, AnthropicKey: s.AnthropicKey,
		Options: meter.Options{
			Server: s.Server, Key: key, Scope: s.Scope,
			IssueTTL: s.IssueTTL, HangupRead: s.HangupRead, DefaultMaxTokens: s.MaxTokens,
			Log: s.Log, Now: s.Now, MetricsToken: s.MetricsToken, MetricsIssue: s.MetricsIssue,
			Connect: func(server, token, owner, name string) (meter.Client, error) {
				return forge.Connect(server, token, owner, name)
			},
			Gate: gateOf(s.GateToken),
		},
	})
}

// gateOf serves the gate with the gate account's token; nil without one.
func gateOf(token string) *meter.GateOptions {
	if token == "" {
		return nil
	}
	return &meter.GateOptions{Token: token, Connect: forge.Connect}
}
