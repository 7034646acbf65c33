package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/gns-guard/gns-guard/internal/dashboard"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/gns-guard/gns-guard/internal/version"
)

// statusOptions are the flags of `status`.
type statusOptions struct {
	issueFlags
	format  string
	publish bool
}

// progressAfter is how many governed issues a sweep reads before it shows
// its progress on a terminal.
const progressAfter = 5

// statusFlags declares the flags of `status`.
func statusFlags(fs *flag.FlagSet) options {
	o := &statusOptions{}
	fs.StringVar(&o.repo, "repo", "", "the repository, `OWNER/NAME`")
	fs.StringVar(&o.server, "server", "", "the Gitea server's `URL` (default: $GITHUB_SERVER_URL)")
	fs.StringVar(&o.token, "token", "", "an access `TOKEN` (default: $GITEA_TOKEN, then $GITHUB_TOKEN); --publish writes the dashboard as its user")
	fs.StringVar(&o.config, "config", "", "a local configuration `FILE` to judge with instead of the repository's "+live.ConfigFile)
	fs.StringVar(&o.guardUser, "guard-user", "", "the `LOGIN` the guard writes as (default: the writer its signed ledger names, "+
		"else "+live.ActionsUser+")")
	fs.StringVar(&o.ledgerKeyEnv, "ledger-key-env", "", "the environment variable (its `NAME`) holding the guard's ledger-key, to verify its "+
		"ledgers (default: trusted by author and marker)")
	fs.StringVar(&o.format, "format", "text", "output format: `text|json|markdown`")
	fs.BoolVar(&o.publish, "publish", false, "keep the repository's dashboard issue (marked "+dashboard.Marker+") with the table and a chart "+
		"of budget burn")
	o.settings = settings.Flags(fs)
	return o
}

func (o *statusOptions) validate(_ *flag.FlagSet, pos []string, _ Env) error {
	if len(pos) > 0 {
		return usageError("status takes no arguments, got %s", strings.Join(pos, " "))
	}
	switch o.format {
	case "text", "json", "markdown":
		return nil
	}
	return usageError("status: --format must be text, json or markdown, not %q", o.format)
}

// runStatus lists every open governed issue of a repository, judged as the
// guard judges it, and with --publish keeps the repository's dashboard
// issue. Exit 1 when an issue fails.
func runStatus(ctx context.Context, o *statusOptions, env Env) error {
	reader, err := o.openRepo("status", env)
	if err != nil {
		return err
	}
	set, err := o.resolve(ctx, "status", env, reader)
	if err != nil {
		return err
	}
	// The dashboard's author is the token's user: it is known before the
	// sweep, so the dashboard is never judged as an issue.
	var login string
	if o.publish {
		if login, err = reader.Client.Self(ctx); err != nil {
			return reader.Where.Error("look up the token's user", err)
		}
	}
	sweep := dashboard.NewSweep(reader, reader.Client, set.Config, o.repo, login, env.Now)
	if isTerminal(env.Stderr) {
		sweep.Progress = dashboard.Progress(env.Stderr, progressAfter)
	}
	res, err := sweep.Run(ctx)
	if err != nil {
		return err
	}
	if base := set.Config.MeterURL; base != "" {
		token, _ := live.Token(o.token, env.Getenv)
		if err := dashboard.FillMetered(ctx, base, token, o.owner, o.name, res); err != nil {
			// A note, never a failure of status.
			fmt.Fprintf(env.Stderr, "gns-guard: status: the meter at %s did not say what it metered: %v\n", base, err)
		}
		dashboard.FillTrees(ctx, set.Config, token, o.repo, res)
	}
	out, err := dashboard.Render(res, o.format, env.Getenv("GITHUB_ACTIONS") == "true")
	if err != nil {
		return cannotRun(err)
	}
	if _, err := env.Stdout.Write(out); err != nil {
		return err
	}
	if o.publish {
		kept, err := dashboard.Keep(ctx, reader.Client, res.Listed, login, dashboard.Body(res, version.String()))
		if err != nil {
			return reader.Where.Error("keep the dashboard issue", err)
		}
		fmt.Fprintf(env.Stderr, "gns-guard: status: dashboard issue #%d %s\n", kept.Number, kept.Action)
	}
	if res.Failed() {
		return errViolations
	}
	return nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
