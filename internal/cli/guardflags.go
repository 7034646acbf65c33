package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// exitForge is what `report` and `recover` need of the server: the
// guard's adapter, and setting the assignee.
type exitForge interface {
	guard.Forge
	SetAssignees(ctx context.Context, number int64, logins []string) error
}

// exitForgeFunc builds the client `report` and `recover` talk through;
// tests replace it.
var exitForgeFunc = func(server, token, owner, repo string) (exitForge, error) {
	return forge.New(server, token, owner, repo)
}

// guardFlags are the guard's inputs a verb takes as flags, so that it
// decides with the Config the action step would use.
type guardFlags struct {
	allowedAgents, budgetAdmins, defaultMaxDepth string
	historyTail                                  int
	pruneThreshold, carryover, pressure          float64
	phaseGrant, maxBudget                        int64
	encoding                                     string
	ledgerKeyEnv                                 string
	guardUser                                    string
}

// add declares the flags, with the action's defaults.
func (g *guardFlags) add(fs *flag.FlagSet) {
	def := guard.DefaultConfig()
	fs.StringVar(&g.allowedAgents, "allowed-agents", "", "the guard's allowed-agents input (comma-separated; empty: any)")
	fs.StringVar(&g.budgetAdmins, "budget-admins", "", "the guard's budget-admins input (comma-separated; empty: repository admins)")
	fs.StringVar(&g.defaultMaxDepth, "default-max-depth", "", "the guard's default-max-depth input (a number, n, or empty)")
	fs.IntVar(&g.historyTail, "history-tail", def.HistoryTail, "the guard's history-tail input")
	fs.Float64Var(&g.pruneThreshold, "prune-threshold", def.PruneThreshold, "the guard's prune-threshold input")
	fs.Float64Var(&g.carryover, "carryover-ratio", def.CarryoverRatio, "the guard's carryover-ratio input")
	fs.Int64Var(&g.phaseGrant, "phase-grant", def.PhaseGrant, "the guard's phase-grant input")
	fs.Float64Var(&g.pressure, "pressure-threshold", def.PressureThreshold, "the guard's pressure-threshold input")
	fs.Int64Var(&g.maxBudget, "max-budget", 0, "the guard's max-budget input (0: no cap)")
	fs.StringVar(&g.encoding, "encoding", string(def.Encoding), "the guard's encoding input: cl100k_base or o200k_base")
	fs.StringVar(&g.ledgerKeyEnv, "ledger-key-env", "", "the environment variable holding the guard's ledger-key, to verify its ledger (empty: trusted by author and marker)")
	fs.StringVar(&g.guardUser, "guard-user", guard.ActionsUser, "the login the guard writes as (its status comment holds the ledger)")
}

// config is the guard's Config for the flags given.
func (g *guardFlags) config(verb string, env Env) (guard.Config, error) {
	cfg := guard.DefaultConfig()
	bad := func(name, v, want string) error {
		return usageError("%s: --%s %s: %s", verb, name, v, want)
	}
	cfg.AllowedAgents = guard.ParseList(g.allowedAgents)
	cfg.BudgetAdmins = guard.ParseList(g.budgetAdmins)
	d, err := guard.ParseMaxDepth(g.defaultMaxDepth)
	if err != nil {
		return cfg, bad("default-max-depth", g.defaultMaxDepth, err.Error())
	}
	cfg.DefaultMaxDepth = d
	switch {
	case g.historyTail < 1:
		return cfg, bad("history-tail", strconv.Itoa(g.historyTail), "expected a whole number >= 1")
	case g.pruneThreshold <= 0 || g.pruneThreshold > 1:
		return cfg, bad("prune-threshold", fmt.Sprint(g.pruneThreshold), "expected a number above 0 up to 1")
	case g.carryover < 0 || g.carryover > 1:
		return cfg, bad("carryover-ratio", fmt.Sprint(g.carryover), "expected a number from 0 up to 1")
	case g.phaseGrant < 0:
		return cfg, bad("phase-grant", fmt.Sprint(g.phaseGrant), "expected a whole number >= 0")
	case g.pressure <= 0:
		return cfg, bad("pressure-threshold", fmt.Sprint(g.pressure), "expected a number above 0")
	case g.maxBudget < 0:
		return cfg, bad("max-budget", fmt.Sprint(g.maxBudget), "expected a whole number >= 0")
	case g.guardUser == "":
		return cfg, bad("guard-user", "", "expected the guard's login")
	}
	cfg.HistoryTail, cfg.PruneThreshold, cfg.CarryoverRatio = g.historyTail, g.pruneThreshold, g.carryover
	cfg.PhaseGrant, cfg.PressureThreshold, cfg.MaxBudget = g.phaseGrant, g.pressure, g.maxBudget
	enc, err := tokens.ParseEncoding(g.encoding)
	if err != nil {
		return cfg, bad("encoding", g.encoding, "expected cl100k_base or o200k_base")
	}
	cfg.Encoding = enc
	if g.ledgerKeyEnv != "" {
		k := env.Getenv(g.ledgerKeyEnv)
		if k == "" {
			return cfg, usageError("%s: --ledger-key-env %s: the variable is empty or not set", verb, g.ledgerKeyEnv)
		}
		cfg.LedgerKey = []byte(k)
	}
	return cfg, nil
}

// repoFlags are --repo, --issue, --server and --token.
type repoFlags struct {
	repo, owner, name string
	issue             int64
	server, token     string
}

func (r *repoFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&r.repo, "repo", "", "the repository, OWNER/NAME")
	fs.Int64Var(&r.issue, "issue", 0, "the issue's number")
	fs.StringVar(&r.server, "server", "", "the Gitea server's URL (default: $GITHUB_SERVER_URL)")
	fs.StringVar(&r.token, "token", "", "an access token (default: $GITEA_TOKEN, then $GITHUB_TOKEN)")
}

// connect checks the flags and connects.
func (r *repoFlags) connect(verb string, env Env) (exitForge, string, error) {
	owner, name, ok := strings.Cut(r.repo, "/")
	switch {
	case r.repo == "":
		return nil, "", usageError("%s: --repo OWNER/NAME is required", verb)
	case !ok || owner == "" || name == "" || strings.Contains(name, "/"):
		return nil, "", usageError("%s: --repo must be OWNER/NAME, not %q", verb, r.repo)
	case r.issue < 1:
		return nil, "", usageError("%s: --issue N (a positive issue number) is required", verb)
	}
	r.owner, r.name = owner, name
	url := firstOf(r.server, env.Getenv("GITHUB_SERVER_URL"))
	if url == "" {
		return nil, "", usageError("%s: no server: pass --server URL or set GITHUB_SERVER_URL", verb)
	}
	tok := firstOf(r.token, env.Getenv("GITEA_TOKEN"), env.Getenv("GITHUB_TOKEN"))
	if tok == "" {
		return nil, "", usageError("%s: no token: pass --token T or set GITEA_TOKEN (the agent's own token: it writes as that user)", verb)
	}
	f, err := exitForgeFunc(url, tok, owner, name)
	if err != nil {
		return nil, "", usageError("%s: %v", verb, err)
	}
	return f, url, nil
}

// serverError says why a verb could not use the server: exit 3.
func serverError(verb, server, what string, err error) error {
	var he *forge.HTTPError
	switch {
	case forge.IsUnreachable(err):
		return cannotRun(fmt.Errorf("%s: could not reach the server %s to %s: %w", verb, server, what, err))
	case errors.As(err, &he) && he.Status == http.StatusUnauthorized:
		return cannotRun(fmt.Errorf("%s: the server %s rejected the token (HTTP 401) when trying to %s; check --token, GITEA_TOKEN or GITHUB_TOKEN", verb, server, what))
	case errors.Is(err, guard.ErrForbidden):
		return cannotRun(fmt.Errorf("%s: the token may not %s (HTTP 403): %w", verb, what, err))
	case errors.Is(err, guard.ErrNotFound):
		return cannotRun(fmt.Errorf("%s: could not %s: not found, or the token cannot see it (HTTP 404)", verb, what))
	}
	return cannotRun(fmt.Errorf("%s: could not %s: %w", verb, what, err))
}

// issueView is an issue read as the guard reads it: the issue, its last
// comments and the guard's status comment (read further back when the
// last comments lack it, a bounded number of pages).
type issueView struct {
	issue  guard.Issue
	recent []guard.Comment
	older  []guard.Comment
	labels []guard.LabelEvent
	status *guard.Comment
}

// maxStatusPages bounds the look back for the status comment, as the
// action does.
const maxStatusPages = 20

func readView(ctx context.Context, f guard.Forge, number int64, window int, guardUser string) (issueView, error) {
	var v issueView
	iss, err := f.Issue(ctx, number)
	if err != nil {
		return v, fmt.Errorf("read issue #%d: %w", number, err)
	}
	page, err := f.RecentComments(ctx, iss, window)
	if err != nil {
		return v, fmt.Errorf("read the last comments of issue #%d: %w", number, err)
	}
	v.issue, v.recent, v.labels = iss, page.Comments, page.Labels
	marker := guard.StatusMarker(number)
	mine := func(c guard.Comment) bool { return c.Author == guardUser && strings.Contains(c.Body, marker) }
	for i := len(v.recent) - 1; i >= 0; i-- {
		if mine(v.recent[i]) {
			v.status = &v.recent[i]
			return v, nil
		}
	}
	start := page.Start
	for pages := 0; start > 0 && pages < maxStatusPages; pages++ {
		p, err := f.CommentsBefore(ctx, number, start)
		if err != nil {
			return v, fmt.Errorf("look for the guard's status comment: %w", err)
		}
		v.older = append(p.Comments, v.older...)
		v.labels = append(p.Labels, v.labels...)
		for i := len(p.Comments) - 1; i >= 0; i-- {
			if c := p.Comments[i]; mine(c) {
				v.status = &c
				return v, nil
			}
		}
		start = p.Start
	}
	return v, nil
}
