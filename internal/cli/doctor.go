package cli

import (
	"context"
	"errors"
	"flag"
	"strings"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/port"
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
	fs.StringVar(&o.adminToken, "admin-token", "", "the repository owner's `TOKEN`, which reads the secrets' names, the teams' members, the collaborators' permissions and the branch protection (default: $"+setup.AdminTokenEnv+")")
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
	if t, _ := tokenFrom(o.token, env); t == "" {
		return usageError("doctor: no token: pass --token TOKEN or set GITEA_TOKEN (a token that reads the repository; the owner's, as --admin-token or $%s, lets every check be made)", setup.AdminTokenEnv)
	}
	adminToken, adminSource := o.adminToken, "--admin-token"
	if adminToken == "" {
		adminToken, adminSource = env.Getenv(setup.AdminTokenEnv), setup.AdminTokenEnv
	}
	if err := notPlaceholder("doctor", "the token from "+adminSource, adminToken); err != nil {
		return err
	}
	reader, client, err := o.connect("doctor", env)
	if err != nil {
		return err
	}
	info, err := client.Repository(ctx)
	if errors.Is(err, issues.ErrNotFound) {
		return usageError("doctor: %s does not exist on %s, or the token cannot see it", o.repo, reader.Where.Server)
	}
	if err != nil {
		return reader.Where.Error("read the repository", err)
	}
	var admin port.PostureAdmin
	if t := strings.TrimSpace(adminToken); t != "" {
		if admin, err = connectForge(reader.Where.Server, t, o.owner, o.name); err != nil {
			return usageError("doctor: %v", err)
		}
	}
	facts, err := client.PostureFacts(ctx, admin, info.DefaultBranch, "--admin-token or $"+setup.AdminTokenEnv)
	if err != nil {
		return reader.Where.Error("read the repository's posture", err)
	}
	set, err := o.resolve(ctx, "doctor", env, reader)
	if err != nil {
		return err
	}
	facts.BudgetAdmins, facts.PublicKey = set.Config.BudgetAdmins, set.LedgerPublicKey
	meter := setup.Meter{URL: set.Config.MeterURL, PublicKey: set.Config.MeterPublicKey}
	d := setup.Diagnose(ctx, o.owner, o.name, facts, reader.Where.Server, admin != nil, meter)
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
