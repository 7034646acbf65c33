//go:build !nometer

package cli

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/gns-guard/gns-guard/internal/meter"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/meterstore"
	"github.com/gns-guard/gns-guard/internal/receipt"
)

// meterBuilt says the meter is in this build.
const meterBuilt = true

// serveMeter opens the store and serves the meter until ctx ends. The
// guard's step image is built without it (the nometer tag): its store
// drivers are most of the binary, and no issue event needs them.
func serveMeter(ctx context.Context, o *meterOptions, env Env, server string, key receipt.Key, metricsToken string) error {
	store, err := meterstore.Open(ctx, o.store)
	if err != nil {
		return cannotRun(fmt.Errorf("meter: %w", err))
	}
	defer store.Close()
	m, err := meter.New(meter.Options{
		Server:           server,
		Upstream:         map[metering.Provider]string{metering.OpenAI: o.openaiURL, metering.Anthropic: o.anthropicURL},
		Keys:             map[metering.Provider]string{metering.OpenAI: env.Getenv(o.openaiKeyEnv), metering.Anthropic: env.Getenv(o.anthropicEnv)},
		Store:            store,
		Key:              key,
		IssueTTL:         o.issueTTL,
		HangupRead:       o.hangup,
		DefaultMaxTokens: o.maxTokens,
		Log:              env.Stderr,
		Now:              env.Now,
		Scope:            o.scope,
		MetricsToken:     metricsToken,
		MetricsIssue:     o.metricsIssue,
		Connect: func(server, token, owner, name string) (meter.Client, error) {
			return connectForge(server, token, owner, name)
		},
	})
	if err != nil {
		return cannotRun(err)
	}
	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		return usageError("meter: --listen %s: %v", o.listen, err)
	}
	fmt.Fprintf(env.Stderr, "gns-guard meter: serving on %s for %s (%s); store %s; receipts signed by %s\n", l.Addr(), server, strings.Join(o.scope, ", "), store.Kind(), key.Public())
	if err := m.Serve(ctx, l, o.drain); err != nil {
		return cannotRun(err)
	}
	fmt.Fprintln(env.Stderr, "gns-guard meter: stopped; every call in flight finished")
	return nil
}
