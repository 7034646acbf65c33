package setup

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/posture"
	"github.com/gns-guard/gns-guard/internal/settings"
)

// Checkup is what `doctor` reads a repository's posture with.
type Checkup struct {
	// Reader reads the repository through its client.
	Reader      *live.Reader
	Owner, Name string
	// AdminToken is the owner's token ("": none), which Connect makes a
	// client of.
	AdminToken string
	Connect    func(server, token, owner, repo string) (port.Forge, error)
	// Resolve reads the settings, once the posture is read.
	Resolve func(ctx context.Context) (settings.Resolved, error)
}

// Doctor reads the repository's posture and settings and diagnoses them.
func Doctor(ctx context.Context, c Checkup) (*Diagnosis, error) {
	rd := c.Reader
	info, err := rd.Client.Repository(ctx)
	if errors.Is(err, issues.ErrNotFound) {
		return nil, &exitcode.UsageError{Err: fmt.Errorf("doctor: %s does not exist on %s, or the token cannot see it", rd.Where.Repo, rd.Where.Server)}
	}
	if err != nil {
		return nil, rd.Where.Error("read the repository", err)
	}
	var admin port.PostureAdmin
	if t := strings.TrimSpace(c.AdminToken); t != "" {
		if admin, err = c.Connect(rd.Where.Server, t, c.Owner, c.Name); err != nil {
			return nil, &exitcode.UsageError{Err: fmt.Errorf("doctor: %v", err)}
		}
	}
	facts, err := rd.Client.PostureFacts(ctx, admin, info.DefaultBranch, "--admin-token or $"+AdminTokenEnv)
	if err != nil {
		return nil, rd.Where.Error("read the repository's posture", err)
	}
	set, err := c.Resolve(ctx)
	if err != nil {
		return nil, err
	}
	facts.BudgetAdmins, facts.PublicKey = set.Config.BudgetAdmins, set.LedgerPublicKey
	meter := Meter{URL: set.Config.MeterURL, PublicKey: set.Config.MeterPublicKey}
	return Diagnose(ctx, c.Owner, c.Name, facts, rd.Where.Server, admin != nil, meter, gate(ctx, rd, set)), nil
}

// gate is the gated posture to judge; nil when ungated.
func gate(ctx context.Context, rd *live.Reader, set settings.Resolved) *posture.Gate {
	cfg := set.Config
	if !cfg.Gated() {
		return nil
	}
	g := &posture.Gate{Account: cfg.GateAccount, Agents: cfg.Agents, MeterURL: cfg.MeterURL, MeterPublicKey: cfg.MeterPublicKey}
	var err error
	if g.Writers, err = rd.Client.Writers(ctx); err != nil {
		g.WritersUnread = "reading the issues' writers: " + err.Error()
	}
	return g
}
