package agentwrite

import (
	"time"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/handoff"
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
	// Attest, set by the gate, signs a result comment with the agent's
	// verified login (docs/gate.md); nil when the agent writes itself.
	Attest func(issue int64, rep handoff.Report, comment string) string
}

// Count gives c the counter of its configuration's encoding.
func (c *Conn) Count() error {
	counter, err := tokens.New(c.Config.Encoding)
	if err != nil {
		return &exitcode.CannotRunError{Err: err}
	}
	c.Counter = counter
	return nil
}
