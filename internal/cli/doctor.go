package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/meterclient"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/posture"
	"github.com/gns-guard/gns-guard/internal/scopes"
	"github.com/gns-guard/gns-guard/internal/settings"
)

// AdminTokenEnv holds the repository owner's token for `doctor` when
// --admin-token is not given.
const AdminTokenEnv = "GNS_GUARD_ADMIN_TOKEN"

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
	fs.StringVar(&o.adminToken, "admin-token", "", "the repository owner's `TOKEN`, which reads the secrets' names, the teams' members, the collaborators' permissions and the branch protection (default: $"+AdminTokenEnv+")")
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
		return usageError("doctor: no token: pass --token TOKEN or set GITEA_TOKEN (a token that reads the repository; the owner's, as --admin-token or $%s, lets every check be made)", AdminTokenEnv)
	}
	adminToken, adminSource := o.adminToken, "--admin-token"
	if adminToken == "" {
		adminToken, adminSource = env.Getenv(AdminTokenEnv), AdminTokenEnv
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
	facts, err := client.PostureFacts(ctx, admin, info.DefaultBranch, "--admin-token or $"+AdminTokenEnv)
	if err != nil {
		return reader.Where.Error("read the repository's posture", err)
	}
	set, err := o.resolve(ctx, "doctor", env, reader)
	if err != nil {
		return err
	}
	facts.BudgetAdmins, facts.PublicKey = set.Config.BudgetAdmins, set.LedgerPublicKey
	checks := append(doctorChecks(posture.Judge(facts)), meterChecks(ctx, set.Config.MeterURL, set.Config.MeterPublicKey, o.owner, o.name)...)
	if o.format == "json" {
		err = printJSON(env, checks)
	} else {
		err = printDoctor(env.Stdout, facts, reader.Where.Server, checks, admin != nil)
	}
	if err != nil {
		return err
	}
	return doctorOutcome(checks)
}

// The meter's checks, made when the settings name a meter.
const (
	checkMeterScope = "meter.scope"
	checkMeterKey   = "meter.key"
)

// meterChecks asks the meter at base what it serves and with which key
// it signs (docs/meter.md#whom-it-serves): this repository must be in its
// scope, and its key the published meter-public-key.
func meterChecks(ctx context.Context, base, published, owner, name string) []doctorCheck {
	if base == "" {
		return nil
	}
	a, err := meterclient.Client{Base: base}.About(ctx)
	if err != nil {
		why := fmt.Sprintf("the meter at %s could not say what it serves: %v", base, err)
		return []doctorCheck{{ID: checkMeterScope, State: stateUnchecked, Why: why, Logins: []string{}}, {ID: checkMeterKey, State: stateUnchecked, Why: why, Logins: []string{}}}
	}
	scope := doctorCheck{ID: checkMeterScope, State: stateHolds, Holds: true, Logins: []string{},
		Why: fmt.Sprintf("the meter at %s serves %s, this repository among them", base, strings.Join(a.Scope, ", "))}
	if !a.Serves(owner, name) {
		scope.State, scope.Holds = stateBroken, false
		scope.Why = fmt.Sprintf("the meter at %s serves %s, not %s/%s: it refuses every call of this repository's agents (meter-scope); start it with --scope %s", base, strings.Join(a.Scope, ", "), owner, name, owner)
	}
	key := doctorCheck{ID: checkMeterKey, State: stateHolds, Holds: true, Logins: []string{}, Why: "the meter signs with meter-public-key " + a.PublicKey}
	switch published {
	case a.PublicKey:
	case "":
		key.State, key.Holds = stateBroken, false
		key.Why = fmt.Sprintf("meter-url is set but meter-public-key is not: no receipt and no metered total is judged; publish %s (gns-guard meter --public-key prints it)", a.PublicKey)
	default:
		key.State, key.Holds = stateBroken, false
		key.Why = fmt.Sprintf("the meter signs with %s, but meter-public-key is %s: every receipt and the metered total fail to verify", a.PublicKey, published)
	}
	return []doctorCheck{scope, key}
}

// The states of a doctor check.
const (
	stateHolds     = "holds"
	stateBroken    = "broken"
	stateUnchecked = "could not check"
)

// doctorCheck is a check as doctor prints it: the judge's, with its
// state, so that "could not check" is told apart from "does not hold".
type doctorCheck struct {
	ID string `json:"id"`
	// State is holds, broken or "could not check".
	State  string   `json:"state"`
	Holds  bool     `json:"holds"`
	Why    string   `json:"why"`
	Logins []string `json:"logins"`
}

// doctorChecks gives each check its state; the why of one that could not
// be made loses its prefix, which the state now says.
func doctorChecks(checks []posture.Check) []doctorCheck {
	out := make([]doctorCheck, len(checks))
	for i, c := range checks {
		d := doctorCheck{ID: c.ID, State: stateHolds, Holds: c.Holds, Why: c.Why, Logins: c.Logins}
		if why, unchecked := c.Unchecked(); unchecked {
			d.State, d.Why = stateUnchecked, why
		} else if !c.Holds {
			d.State = stateBroken
		}
		out[i] = d
	}
	return out
}

// doctorOutcome is the exit: 1 when a check made does not hold, else 4
// when some could not be made, else 0 (docs/contract.md §9).
func doctorOutcome(checks []doctorCheck) error {
	unchecked := false
	for _, c := range checks {
		switch c.State {
		case stateBroken:
			return errViolations
		case stateUnchecked:
			unchecked = true
		}
	}
	if unchecked {
		return exitcode.ErrUnchecked
	}
	return nil
}

// printDoctor prints the checks, one a line with its state, and a
// summary; withAdmin says the owner's token was given.
func printDoctor(out io.Writer, f posture.Facts, server string, checks []doctorCheck, withAdmin bool) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "gns-guard doctor: %s on %s, default branch %s\n\n", f.Repo, server, f.DefaultBranch)
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	count := map[string]int{}
	for _, c := range checks {
		state := c.State
		if state == stateBroken {
			state = "BROKEN"
		}
		count[c.State]++
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", state, c.ID, c.Why)
	}
	tw.Flush()
	b.WriteByte('\n')
	switch {
	case count[stateBroken] > 0:
		fmt.Fprintf(&b, "%d of %d guarantees do not hold: see the threat model in the README.", count[stateBroken], len(checks))
	case count[stateUnchecked] > 0:
		fmt.Fprintf(&b, "Every check that could be made holds (%d of %d).", count[stateHolds], len(checks))
	default:
		fmt.Fprintf(&b, "Every guarantee of the threat model holds (%d checks).", len(checks))
	}
	switch n := count[stateUnchecked]; {
	case n > 0 && withAdmin:
		fmt.Fprintf(&b, " %d could not be checked with the tokens given: each says what it needs (%s).", n, scopes.Admin.Needs())
	case n > 0:
		fmt.Fprintf(&b, " %d could not be checked with the tokens given: pass the owner's token as --admin-token (or $%s) to check them.", n, AdminTokenEnv)
	}
	b.WriteByte('\n')
	_, err := out.Write(b.Bytes())
	return err
}
