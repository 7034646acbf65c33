package cli

import (
	"context"
	"flag"

	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/gns-guard/gns-guard/internal/setup"
)

// doctorOptions are the parsed flags of `doctor`.
type doctorOptions struct {
	issueFlags
	adminToken string
	format     string
}

// doctorFlags declares the flags of `doctor`.
func doctorFlags(fs *flag.FlagSet) options {
	o := &doctorOptions{}
	fs.StringVar(&o.repo, "repo", "", "the repository, `OWNER/NAME`")
	fs.StringVar(&o.server, "server", "", "the Gitea server's `URL` (default: $GITHUB_SERVER_URL)")
	fs.StringVar(&o.token, "token", "", "an access `TOKEN` that reads the repository (default: $GITEA_TOKEN, then $GITHUB_TOKEN)")
	fs.StringVar(&o.adminToken, "admin-token", "", "the repository owner's `TOKEN`, which reads the secrets' names, the teams' members, the "+
		"collaborators' permissions and the branch protection (default: $"+setup.AdminTokenEnv+")")
	fs.StringVar(&o.format, "format", "text", "output format: `text|json`")
	o.settings = func() settings.Layer { return settings.Layer{} }
	return o
}

func (o *doctorOptions) validate(_ *flag.FlagSet, pos []string, _ Env) error {
	return o.validateRepoVerb("doctor", o.format, pos)
}

// runDoctor says which guarantees of the threat model hold in the
// repository as configured now: exit 0 when all do, 1 when one does not.
func runDoctor(ctx context.Context, o *doctorOptions, env Env) error {
	if t, _ := live.Token(o.token, env.Getenv); t == "" {
		return usageError("doctor: no token: pass --token TOKEN or set GITEA_TOKEN (a token that reads the repository; the owner's, as "+
			"--admin-token or $%s, lets every check be made)", setup.AdminTokenEnv)
	}
	adminToken, adminSource := o.adminToken, "--admin-token"
	if adminToken == "" {
		adminToken, adminSource = env.Getenv(setup.AdminTokenEnv), setup.AdminTokenEnv
	}
	if err := live.NotPlaceholder("doctor", "the token from "+adminSource, adminToken); err != nil {
		return err
	}
	reader, err := o.connect("doctor", env)
	if err != nil {
		return err
	}
	d, err := setup.Doctor(ctx, setup.Checkup{Reader: reader, Owner: o.owner, Name: o.name, AdminToken: adminToken, Connect: connectForge,
		Resolve: func(ctx context.Context) (settings.Resolved, error) { return o.resolve(ctx, "doctor", env, reader) }})
	if err != nil {
		return err
	}
	if o.format == "json" {
		err = printJSON(env, d.Checks)
	} else {
		err = d.WriteText(env.Stdout)
	}
	if err != nil {
		return err
	}
	return d.Outcome()
}
