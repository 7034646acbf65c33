package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/dashboard"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/fence"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/port"
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
	fs.StringVar(&o.guardUser, "guard-user", "", "the `LOGIN` the guard writes as (default: the writer its signed ledger names, else "+issues.ActionsUser+")")
	fs.StringVar(&o.ledgerKeyEnv, "ledger-key-env", "", "the environment variable (its `NAME`) holding the guard's ledger-key, to verify its ledgers (default: trusted by author and marker)")
	fs.StringVar(&o.format, "format", "text", "output format: `text|json|markdown`")
	fs.BoolVar(&o.publish, "publish", false, "keep the repository's dashboard issue (marked "+dashboard.Marker+") with the table and a chart of budget burn")
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
	reader, client, err := o.openRepo("status", env)
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
		if login, err = client.Self(ctx); err != nil {
			return reader.Where.Error("look up the token's user", err)
		}
	}
	res, err := newSweep(env, reader, client, set.Config, o.repo, login).Run(ctx)
	if err != nil {
		return err
	}
	if base := set.Config.MeterURL; base != "" {
		token, _ := tokenFrom(o.token, env)
		if err := dashboard.FillMetered(ctx, base, token, o.owner, o.name, res); err != nil {
			// A note, never a failure of status.
			fmt.Fprintf(env.Stderr, "gns-guard: status: the meter at %s did not say what it metered: %v\n", base, err)
		}
	}
	if err := printStatus(env, o.format, res); err != nil {
		return err
	}
	if o.publish {
		kept, err := dashboard.Keep(ctx, client, res.Listed, login, dashboard.Body(res, version.String()))
		if err != nil {
			return reader.Where.Error("keep the dashboard issue", err)
		}
		fmt.Fprintf(env.Stderr, "gns-guard: status: dashboard issue #%d %s\n", kept.Number, kept.Action)
	}
	if res.Failed() {
		return exitcode.ErrViolations
	}
	return nil
}

// newSweep is the sweep of the repository's governed issues, which skips
// the dashboard (written by login), and on a terminal shows its progress.
func newSweep(env Env, reader *live.Reader, client port.Forge, cfg config.Config, repo, login string) *dashboard.Sweep {
	sw := &dashboard.Sweep{
		Reader: reader, Lister: client, Config: cfg, Repo: repo, Now: env.Now, ServerNow: client.ServerTime, Workflows: client,
		Skip: func(is issues.Issue, author string) bool { return dashboard.IsDashboard(is, author, login) },
	}
	if isTerminal(env.Stderr) {
		sw.Progress = func(done, total int) {
			if total > progressAfter {
				fmt.Fprintf(env.Stderr, "\rgns-guard: status: read %d of %s", done, markdown.Plural(total, "governed issue"))
				if done == total {
					fmt.Fprintln(env.Stderr)
				}
			}
		}
	}
	return sw
}

// printStatus prints the sweep in format. Inside Gitea Actions the text
// and Markdown forms, which hold issue titles, go between stop-commands
// markers (no issue text may run a workflow command).
func printStatus(env Env, format string, res *dashboard.Result) error {
	var out string
	switch format {
	case "json":
		b, err := dashboard.JSON(res)
		if err != nil {
			return cannotRun(err)
		}
		_, err = env.Stdout.Write(b)
		return err
	case "markdown":
		out = dashboard.Markdown(res)
	default:
		out = dashboard.Text(res)
	}
	if env.Getenv("GITHUB_ACTIONS") == "true" {
		fc := fence.New()
		out = fc.Open() + out + fc.Close()
	}
	_, err := fmt.Fprint(env.Stdout, out)
	return err
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
