package meter

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/meterstore"
)

// Start configures `gns-guard meter`: Options but the store, the store to
// open, the address and the providers.
type Start struct {
	Options
	// Store is a SQLite file or a postgres:// URL.
	Store  string
	Listen string
	// Drain bounds finishing calls in flight after ctx ends.
	Drain time.Duration
	// OpenAIURL and AnthropicURL are the providers before /v1.
	OpenAIURL, AnthropicURL, OpenAIKey, AnthropicKey string
}

// Run opens the store, serves until ctx ends, then drains. Errors carry
// exit codes: a bad address is exit 2.
func Run(ctx context.Context, s Start) error {
	store, err := meterstore.Open(ctx, s.Store)
	if err != nil {
		return &exitcode.CannotRunError{Err: fmt.Errorf("meter: %w", err)}
	}
	defer store.Close()
	o := s.Options
	o.Store = store
	o.Upstream = map[metering.Provider]string{metering.OpenAI: s.OpenAIURL, metering.Anthropic: s.AnthropicURL}
	o.Keys = map[metering.Provider]string{metering.OpenAI: s.OpenAIKey, metering.Anthropic: s.AnthropicKey}
	m, err := New(o)
	if err != nil {
		return &exitcode.CannotRunError{Err: err}
	}
	l, err := net.Listen("tcp", s.Listen)
	if err != nil {
		return &exitcode.UsageError{Err: fmt.Errorf("meter: --listen %s: %v", s.Listen, err)}
	}
	fmt.Fprintf(o.Log, "gns-guard meter: serving on %s for %s (%s); store %s; receipts signed by %s\n",
		l.Addr(), o.Server, strings.Join(o.Scope, ", "), store.Kind(), o.Key.Public())
	if err := m.Serve(ctx, l, s.Drain); err != nil {
		return &exitcode.CannotRunError{Err: err}
	}
	fmt.Fprintln(o.Log, "gns-guard meter: stopped; every call in flight finished")
	return nil
}
