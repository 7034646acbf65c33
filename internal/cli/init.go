package cli

import (
	"context"
	"flag"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/gns-guard/gns-guard/internal/setup"
)

// initOptions are the parsed flags of `init`.
type initOptions struct {
	issueFlags
	commit bool
	dryRun bool
	format string
	agents string
	runner string
	gated  bool
	gate   string
	// logins are the accounts --agents names, for the team; mapped are
	// its NAME=LOGIN items, for the agents setting.
	logins []string
	mapped map[string][]string
}

// initFlags declares the flags of `init`.
func initFlags(fs *flag.FlagSet) options {
	o := &initOptions{}
	fs.StringVar(&o.repo, "repo", "", "the repository, `OWNER/NAME`")
	fs.StringVar(&o.server, "server", "", "the Gitea server's `URL` (default: $GITHUB_SERVER_URL)")
	fs.StringVar(&o.token, "token", "", "an access `TOKEN` with write access to the repository (default: $GITEA_TOKEN, then $GITHUB_TOKEN)")
	fs.BoolVar(&o.commit, "commit", false,
		"write the files straight onto the default branch instead of proposing them in a pull request from "+setup.Branch)
	fs.BoolVar(&o.dryRun, "dry-run", false, "print every write init would make, and make none")
	fs.StringVar(&o.format, "format", "text", "output format: `text|json`")
	fs.StringVar(&o.agents, "agents", "", "the agents' accounts (and the guard's own) to put in the organisation team "+setup.AgentsTeam+
		", comma-separated: `LOGIN|NAME=LOGIN,...`, where NAME=LOGIN also lets LOGIN speak as agent NAME (the agents setting of the file init writes)")
	fs.StringVar(&o.runner, "runner", setup.RunnerDocker, "the workflow's runner: `docker|host`; docker uses the action's image, "+
		"host runs the gns-guard binary installed on a runner without Docker (docs/operations.md#the-runner)")
	fs.BoolVar(&o.gated, "gated", false, "set the gated posture up (docs/gate.md): the agents' team only reads, the gate account writes "+
		"for them from the team "+setup.GateTeam+"; needs --gate-account and --agents NAME=LOGIN")
	fs.StringVar(&o.gate, "gate-account", "", "with --gated, the gate's account, `LOGIN`: put in "+setup.GateTeam+" and named in gate-account")
	return o
}

func (o *initOptions) validate(_ *flag.FlagSet, pos []string, _ Env) error {
	if o.runner != setup.RunnerDocker && o.runner != setup.RunnerHost {
		return usageError("init: --runner must be docker or host, not %q", o.runner)
	}
	if err := o.parseAgents(); err != nil {
		return err
	}
	switch {
	case o.gated != (o.gate != ""):
		return usageError("init: --gated and --gate-account LOGIN go together")
	case o.gated && len(o.mapped) == 0:
		return usageError("init: --gated needs --agents NAME=LOGIN,...: the gate serves only the logins the agents setting maps")
	}
	return o.validateRepoVerb("init", o.format, pos)
}

// parseAgents reads --agents: LOGIN items for the team, NAME=LOGIN items
// for the team and the agents map.
func (o *initOptions) parseAgents() error {
	var pairs []string
	for _, item := range splitList(o.agents) {
		_, login, ok := strings.Cut(item, "=")
		if ok {
			pairs = append(pairs, item)
		} else {
			login = item
		}
		if login = strings.TrimSpace(login); !slices.Contains(o.logins, login) {
			o.logins = append(o.logins, login)
		}
	}
	m, err := settings.ParseAgents(pairs)
	if err != nil {
		return usageError("init: --agents: %v", err)
	}
	o.mapped = m
	return nil
}

// splitList splits a comma-separated flag into its non-empty items.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// runInit sets a repository up for the guard (package setup).
func runInit(ctx context.Context, o *initOptions, env Env) error {
	reader, err := o.connect("init", env)
	if err != nil {
		return err
	}
	rep, err := setup.Run(ctx, reader.Client, reader.Where, setup.Options{
		Commit: o.commit, DryRun: o.dryRun, Runner: o.runner, Team: o.logins, Agents: o.mapped, GateAccount: o.gate,
	})
	if err != nil {
		return err
	}
	if o.format == "json" {
		return printJSON(env, rep)
	}
	return rep.WriteText(env.Stdout)
}
