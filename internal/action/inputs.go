package action

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// InputError is a malformed input value: a configuration error (exit 2).
type InputError struct {
	Input string // the input's name, as in action.yml
	Value string
	Want  string
}

func (e *InputError) Error() string {
	return fmt.Sprintf("input %s: %s, got %q", e.Input, e.Want, e.Value)
}

// Settings are the parsed inputs: the guard's configuration and the tokens.
type Settings struct {
	Config     guard.Config
	Token      string
	AdminToken string
}

// readSettings parses every input of action.yml. input returns an input's
// trimmed value ("" when unset).
func readSettings(input func(name string) string) (Settings, error) {
	s := Settings{Config: guard.DefaultConfig()}
	c := &s.Config
	s.Token = input("token")
	s.AdminToken = input("admin-token")
	p := parser{input: input}
	if v := input("fail-on"); v != "" {
		if v != "violation" && v != "never" {
			return s, &InputError{"fail-on", v, "expected violation or never"}
		}
		c.FailOn = v
	}
	c.DryRun = p.bool("dry-run", false)
	c.PruneThreshold = p.float("prune-threshold", c.PruneThreshold, 0, 1, false)
	c.CarryoverRatio = p.float("carryover-ratio", c.CarryoverRatio, 0, 1, true)
	c.PhaseGrant = int64(p.int("phase-grant", int(c.PhaseGrant), 0))
	c.HistoryTail = p.int("history-tail", c.HistoryTail, 1)
	c.PressureThreshold = p.float("pressure-threshold", c.PressureThreshold, 0, math.Inf(1), false)
	c.MaxCheckpointBytes = p.int("max-checkpoint-bytes", c.MaxCheckpointBytes, 1)
	c.DigestAfter = p.int("digest-after", c.DigestAfter, 0)
	if v := input("default-max-depth"); v != "" {
		d, err := guard.ParseMaxDepth(v)
		if err != nil {
			p.fail("default-max-depth", v, err.Error())
		}
		c.DefaultMaxDepth = d
	}
	c.AllowedAgents = guard.ParseList(input("allowed-agents"))
	c.BudgetAdmins = guard.ParseList(input("budget-admins"))
	if v, ok := p.raw("protected-paths"); ok {
		c.ProtectedPaths = guard.ParseList(v)
	}
	if v := input("encoding"); v != "" {
		enc, err := tokens.ParseEncoding(v)
		if err != nil {
			p.fail("encoding", v, "expected cl100k_base or o200k_base")
		}
		c.Encoding = enc
	}
	c.MetricsFile = input("metrics-file")
	if k := input("ledger-key"); k != "" {
		c.LedgerKey = []byte(k)
	}
	c.MaxBudget = int64(p.int("max-budget", 0, 1))
	return s, p.err
}

// parser reads typed inputs and keeps the first error.
type parser struct {
	input func(string) string
	err   error
}

func (p *parser) fail(name, value, want string) {
	if p.err == nil {
		p.err = &InputError{name, value, want}
	}
}

func (p *parser) raw(name string) (string, bool) {
	v := p.input(name)
	return v, v != ""
}

func (p *parser) bool(name string, def bool) bool {
	v, ok := p.raw(name)
	if !ok {
		return def
	}
	switch strings.ToLower(v) {
	case "true", "yes", "1", "on":
		return true
	case "false", "no", "0", "off":
		return false
	}
	p.fail(name, v, "expected true or false")
	return def
}

func (p *parser) int(name string, def, least int) int {
	v, ok := p.raw(name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < least {
		p.fail(name, v, fmt.Sprintf("expected a whole number >= %d", least))
		return def
	}
	return n
}

// float reads a number in [lo, hi]; loOpen excludes lo itself unless loIncl.
func (p *parser) float(name string, def, lo, hi float64, loIncl bool) float64 {
	v, ok := p.raw(name)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	bad := err != nil || math.IsNaN(f) || f > hi || f < lo || (!loIncl && f == lo)
	if bad {
		want := fmt.Sprintf("expected a number above %g", lo)
		if loIncl {
			want = fmt.Sprintf("expected a number from %g", lo)
		}
		if !math.IsInf(hi, 1) {
			want += fmt.Sprintf(" up to %g", hi)
		}
		p.fail(name, v, want)
		return def
	}
	return f
}
