package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// Unlimited is the depth limit of `cascade::depth-n`.
const Unlimited = -1

// Config is the guard's configuration: the action's inputs, parsed.
type Config struct {
	// FailOn is "violation" (default) or "never".
	FailOn string
	// DryRun computes and prints the plan and writes nothing.
	DryRun bool
	// PruneThreshold: prune when consumed > PruneThreshold * total (0.8).
	PruneThreshold float64
	// CarryoverRatio: a new phase starts with floor(remaining * CarryoverRatio) + PhaseGrant (0.5).
	CarryoverRatio float64
	// PhaseGrant is added to a new phase's budget (0).
	PhaseGrant int64
	// HistoryTail is the most entries history_tail holds (3).
	HistoryTail int
	// DefaultMaxDepth: nil means cascade-label-missing; Unlimited means n.
	DefaultMaxDepth *int
	// AllowedAgents, when not empty, lists every agent that may act.
	AllowedAgents []string
	// BudgetAdmins raise budgets, change versions and approve; empty:
	// repository admins.
	BudgetAdmins []string
	// LedgerKey derives the Ed25519 signing key; empty trusts author and
	// marker.
	LedgerKey []byte
	// LedgerKeyPrevious still verifies old records, which LedgerKey
	// re-signs.
	LedgerKeyPrevious []byte
	// LedgerPublicKey verifies records and archives without the secret.
	LedgerPublicKey string
	// LedgerStandIn signs in place of ledger-key where a key verifies
	// (ledger-public-key) but ledger-key is not held: `report` draws one
	// afresh for each prediction of the guard's runs, so that the record
	// and archive parts a predicted run writes verify on the next as the
	// guard's own do. Never a setting, never written to an issue.
	LedgerStandIn []byte
	// MaxBudget caps a new budget.total until approved; 0: no cap.
	MaxBudget int64
	// RepositoryBudget caps grants within RepositoryBudgetWindow; 0: no cap.
	RepositoryBudget       int64
	RepositoryBudgetWindow time.Duration
	// ProtectedPaths need the evolve-system label to change (.kilo/).
	ProtectedPaths []string
	// PressureThreshold: fail when entry load / max context exceeds it (0.6).
	PressureThreshold float64
	// Encoding is the tokenizer encoding (cl100k_base).
	Encoding tokens.Encoding
	// MaxCheckpointBytes caps the checkpoint block before parsing (65536).
	MaxCheckpointBytes int
	// DigestAfter: post a completion digest after this many results (5).
	DigestAfter int
	// MetricsFile, when set, gets one JSON line per run.
	MetricsFile string
	// UnderReport is "warn" (default), "fail" or "off".
	UnderReport string
	// StaleAfter is how long without accepted progress means stale.
	StaleAfter time.Duration
	// UnjudgedGrace is how long the body may be ahead of the guard's
	// ledger before context and report refuse to build on it and status
	// lists the issue (2m).
	UnjudgedGrace time.Duration
	// Metering "required" makes a result without a valid receipt a
	// violation.
	Metering string
	// MeterPublicKey verifies receipts; empty: receipts are not judged.
	MeterPublicKey string
	// MeterURL serves report's receipts; empty: no meter.
	MeterURL string
	// GateAccount is the login the gate writes agents' results as
	// (docs/gate.md). Set, the repository runs the gated posture: agents
	// hold read access and write through the gate at MeterURL.
	GateAccount string
	// Prices are by model, as the meter prices receipts.
	Prices map[string]Price
	// MoneyCap is in millionths of a dollar; 0: no cap.
	MoneyCap int64
	// Agents maps an agent's name to the Gitea logins that may speak as
	// it (setting agents, file only): a result comment counts as agent
	// X's only when one of X's logins posted it. Empty: any account that
	// can write the issue may speak as any agent.
	Agents map[string][]string
	// LoadCommentsFrom is "writers" (default) or "everyone".
	LoadCommentsFrom string
	// Labels are the label names the guard reads and sets.
	Labels LabelNames
}

// Price is in dollars per million tokens.
type Price struct {
	Input, Output, Cached float64
}

// LabelNames are the label names the guard reads and sets.
type LabelNames struct {
	CascadePrefix       string // "cascade::depth-": N or n follows
	SizePrefix          string // "size::": tiny, small, medium or large follows
	DepthExceeded       string // "cascade::depth-exceeded"
	BudgetExhausted     string // "budget::exhausted"
	PermissionViolation string // "permission::violation"
	PressureHigh        string // "context::pressure-high"
	EvolveSystem        string // "permission::evolve-system"
}

// Approval labels' removal by an approver is the approval.
func (n LabelNames) Approval() []string {
	return []string{n.BudgetExhausted, n.PermissionViolation}
}

// DefaultLabels returns the label names of the GNS-2 protocol.
func DefaultLabels() LabelNames {
	return LabelNames{
		CascadePrefix:       "cascade::depth-",
		SizePrefix:          "size::",
		DepthExceeded:       "cascade::depth-exceeded",
		BudgetExhausted:     "budget::exhausted",
		PermissionViolation: "permission::violation",
		PressureHigh:        "context::pressure-high",
		EvolveSystem:        "permission::evolve-system",
	}
}

// DefaultConfig is an action step with no inputs.
func Default() Config {
	return Config{
		FailOn:                 "violation",
		PruneThreshold:         0.8,
		CarryoverRatio:         0.5,
		PhaseGrant:             0,
		HistoryTail:            3,
		ProtectedPaths:         []string{".kilo/", ".gitea/workflows/", ".gitea/gns-guard.yml"},
		PressureThreshold:      0.6,
		Encoding:               tokens.CL100kBase,
		MaxCheckpointBytes:     64 << 10,
		DigestAfter:            5,
		UnderReport:            "warn",
		Metering:               "off",
		LoadCommentsFrom:       "writers",
		StaleAfter:             7 * 24 * time.Hour,
		UnjudgedGrace:          2 * time.Minute,
		RepositoryBudgetWindow: 7 * 24 * time.Hour,
		Labels:                 DefaultLabels(),
	}
}

// Specs give color and description to labels the guard creates.
func (n LabelNames) Specs() []issues.LabelSpec {
	return []issues.LabelSpec{
		{Name: n.DepthExceeded, Color: "b60205", Description: "gns-guard: checkpoint depth is over the cascade limit; the issue is locked"},
		{Name: n.BudgetExhausted, Color: "d93f0b", Description: "gns-guard: token budget exhausted; a person removes this label to approve more"},
		{Name: n.PermissionViolation, Color: "5319e7", Description: "gns-guard: an agent or edit broke a permission rule; a person removes this label"},
		{Name: n.PressureHigh, Color: "fbca04", Description: "gns-guard: the next agent's entry context is over the pressure threshold"},
	}
}

// sizeColors are lighter for smaller tasks.
var sizeColors = map[string]string{"tiny": "c2f0c2", "small": "8fdb8f", "medium": "4fbf6a", "large": "238636"}

// GovernanceSpecs are the governance labels `init` creates and the guard
// pins: the ones the guard sets (Specs), the depth limits, the task sizes
// and the permission to change protected paths, with colors and
// descriptions that say what they mean (docs/contract.md §3).
func GovernanceSpecs(n LabelNames) []issues.LabelSpec {
	specs := n.Specs()
	depth := []string{"c5def5", "a2c4ec", "7aa7e0", "4f86cf"}
	for d, color := range depth {
		desc := fmt.Sprintf("gns-guard: checkpoint depth 0..%d allowed (agents nest at most %d deep); raising it needs an approver", d, d)
		if d == 0 {
			desc = "gns-guard: checkpoint depth 0 only (no sub-agents); raising it needs an approver"
		}
		specs = append(specs, issues.LabelSpec{Name: fmt.Sprintf("%s%d", n.CascadePrefix, d), Color: color, Description: desc})
	}
	specs = append(specs, issues.LabelSpec{Name: n.CascadePrefix + "n", Color: "1d4f91",
		Description: "gns-guard: no depth limit; adding it to a governed issue needs an approver"})
	for _, s := range issues.TaskSizes() {
		specs = append(specs, issues.LabelSpec{Name: n.SizePrefix + s.Name, Color: sizeColors[s.Name],
			Description: fmt.Sprintf("gns-guard: %s task: an agent loads at most %d tokens, the checkpoint at most %d (unlabelled: next "+
				"estimate under %d)", s.Name, s.MaxContext, s.Overhead, s.Below)})
	}
	return append(specs, issues.LabelSpec{Name: n.EvolveSystem, Color: "e99695",
		Description: "gns-guard: the pull request may change the protected paths (protected-paths); adding it needs an approver"})
}

// Approvers says who may approve, for messages.
func (c Config) Approvers() string {
	if len(c.BudgetAdmins) > 0 {
		return fmt.Sprintf("a user in budget-admins: %v", c.BudgetAdmins)
	}
	return "a repository admin"
}

// RecentWindow is how many of the issue's last comments a run reads: the
// last three (what an agent loads on entry) and enough to count the agent
// results since the last digest.
func (c Config) RecentWindow() int { return max(3, c.DigestAfter+2) }

// ParseList splits on commas or newlines, trimming and dropping empties.
func ParseList(v string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// ParseMaxDepth takes >= 0, n (Unlimited), or "" (nil); errors say what's
// accepted.
func ParseMaxDepth(v string) (*int, error) {
	if v == "" {
		return nil, nil
	}
	if v == "n" || v == "N" {
		d := Unlimited
		return &d, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return nil, errors.New("expected a whole number >= 0, n (unlimited), or nothing")
	}
	return &n, nil
}

// Gated says agents write through the gate (docs/gate.md).
func (c Config) Gated() bool { return c.GateAccount != "" }
