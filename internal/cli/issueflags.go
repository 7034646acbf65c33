package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/settings"
)

// connectForge builds the client the verbs that work on a live issue talk
// through; tests replace it.
var connectForge = forge.Connect

// issueFlags are the flags of a verb that works on a live issue: which
// issue, how to reach the server, and the configuration the guard judges
// it with — the repository's .gitea/gns-guard.yml (or --config FILE) under
// the settings given as flags, exactly as the action step resolves its
// inputs over the file.
type issueFlags struct {
	repo, owner, name string
	issue             int64
	server, token     string
	config            string
	guardUser         string
	ledgerKeyEnv      string
	ledgerKey         []byte // the secret --ledger-key-env names
	settings          func() settings.Layer
}

// add declares the flags; the settings are the table's (package settings).
func (f *issueFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.repo, "repo", "", "the repository, `OWNER/NAME`")
	fs.Int64Var(&f.issue, "issue", 0, "the issue's number")
	fs.StringVar(&f.server, "server", "", "the Gitea server's `URL` (default: $GITHUB_SERVER_URL)")
	fs.StringVar(&f.token, "token", "", "an access `TOKEN` (default: $GITEA_TOKEN, then $GITHUB_TOKEN)")
	fs.StringVar(&f.config, "config", "", "a local configuration `FILE` to judge with instead of the repository's "+live.ConfigFile)
	fs.StringVar(&f.guardUser, "guard-user", "", "the `LOGIN` the guard writes as (default: the writer its signed ledger names, "+
		"else "+live.ActionsUser+")")
	fs.StringVar(&f.ledgerKeyEnv, "ledger-key-env", "", "the environment variable (its `NAME`) holding the guard's ledger-key, to verify its "+
		"ledger (default: trusted by author and marker)")
	f.settings = settings.Flags(fs)
}

// open checks the flags and connects: a reader of the issue's repository,
// with the client it reads through.
func (f *issueFlags) open(verb string, env Env) (*live.Reader, error) {
	if err := f.checkRepo(verb, true); err != nil {
		return nil, err
	}
	return f.connect(verb, env)
}

// openRepo is open for a verb on the whole repository: it takes no
// --issue.
func (f *issueFlags) openRepo(verb string, env Env) (*live.Reader, error) {
	if err := f.checkRepo(verb, false); err != nil {
		return nil, err
	}
	return f.connect(verb, env)
}

// checkRepo checks --repo OWNER/NAME and, when the verb needs one,
// --issue N, and keeps the owner and the name.
func (f *issueFlags) checkRepo(verb string, needIssue bool) error {
	owner, name, ok := strings.Cut(f.repo, "/")
	switch {
	case f.repo == "":
		return usageError("%s: --repo OWNER/NAME is required", verb)
	case !ok || owner == "" || name == "" || strings.Contains(name, "/"):
		return usageError("%s: --repo must be OWNER/NAME, not %q", verb, f.repo)
	case needIssue && f.issue < 1:
		return usageError("%s: --issue N (a positive issue number) is required", verb)
	}
	f.owner, f.name = owner, name
	return nil
}

// connect connects to the server the flags or the environment name, with
// the token they give: a reader of the repository, with the client it
// reads through. --ledger-key-env, when given, must name a secret.
func (f *issueFlags) connect(verb string, env Env) (*live.Reader, error) {
	server, err := live.ServerURL(verb, f.server, env.Getenv)
	if err != nil {
		return nil, err
	}
	token, source := live.Token(f.token, env.Getenv)
	if err := live.NotPlaceholder(verb, "the token from "+source, token); err != nil {
		return nil, err
	}
	if f.ledgerKeyEnv != "" {
		if f.ledgerKey, err = live.LedgerKey(verb, f.ledgerKeyEnv, env.Getenv); err != nil {
			return nil, err
		}
	}
	client, err := connectForge(server, token, f.owner, f.name)
	if err != nil {
		return nil, usageError("%s: %v", verb, err)
	}
	client.HoldSecrets(live.Held(f.token, env.Getenv, f.heldEnv()...)...)
	d := live.Dial{Verb: verb, Server: server, Repo: f.repo, TokenSource: source, Guard: f.guardUser, LedgerKey: f.ledgerKey}
	return live.Open(d, client), nil
}

// resolve reads the configuration the guard judges the issue with: the
// repository's file (one request) or --config FILE, under the flags.
func (f *issueFlags) resolve(ctx context.Context, verb string, env Env, rd *live.Reader) (settings.Resolved, error) {
	o := live.ConfigOptions{Top: []settings.Layer{f.settings()}}
	if f.config != "" {
		l, err := localConfig(env, f.config)
		if err != nil {
			return settings.Resolved{}, err
		}
		o.Local = &l
	}
	res, err := rd.Resolve(ctx, o, f.ledgerKey)
	if err != nil {
		return res, prefixed(verb, err)
	}
	return res, nil
}

// localConfig reads a configuration file given with --config.
func localConfig(env Env, name string) (settings.Layer, error) {
	data, err := env.ReadFile(name)
	if err != nil {
		return settings.Layer{}, usageError("--config %s: %v", name, unwrapPath(err))
	}
	l, err := settings.FileLayer(name, data)
	if err != nil {
		return l, usageError("%v", err)
	}
	return l, nil
}

// unwrapPath drops the repeated path from an *os.PathError.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// prefixed puts the verb before a configuration error's message (a
// failed request names it already).
func prefixed(verb string, err error) error {
	var ue *exitcode.UsageError
	if errors.As(err, &ue) {
		return &exitcode.UsageError{Err: fmt.Errorf("%s: %w", verb, ue.Err)}
	}
	return err
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// validateRepoVerb checks the arguments of a verb that works on a whole
// repository (init, doctor): no positional argument, --format text or
// json, and --repo OWNER/NAME.
func (f *issueFlags) validateRepoVerb(verb, format string, pos []string) error {
	if len(pos) > 0 {
		return usageError("%s takes no arguments, got %s", verb, strings.Join(pos, " "))
	}
	if err := checkFormat(verb, format); err != nil {
		return err
	}
	return f.checkRepo(verb, false)
}
