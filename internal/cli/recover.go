package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/agentwrite"
)

// recoverOptions are the parsed flags of `recover`.
type recoverOptions struct {
	issueFlags
	apply  bool
	format string
}

// recoverFlags declares the flags of `recover`.
func recoverFlags(fs *flag.FlagSet) options {
	o := &recoverOptions{}
	o.issueFlags.add(fs)
	fs.BoolVar(&o.apply, "apply", false, "write the proposal into the body (compare-and-swap); only a user in --budget-admins, or a repository "+
		"admin when it is empty")
	fs.StringVar(&o.format, "format", "text", "output format: `text|json`")
	return o
}

func (o *recoverOptions) validate(_ *flag.FlagSet, pos []string, _ Env) error {
	if err := noPositional("recover", pos); err != nil {
		return err
	}
	if o.format != "text" && o.format != "json" {
		return usageError("recover: --format must be text or json, not %q", o.format)
	}
	return nil
}

// runRecover proposes, and with --apply writes, a checkpoint rebuilt from
// the last state the guard trusted and the agents' footers since.
func runRecover(ctx context.Context, o *recoverOptions, env Env) error {
	conn, err := o.connect(ctx, env)
	if err != nil {
		return err
	}
	res, err := agentwrite.Recover(ctx, conn, o.issue, o.apply)
	switch {
	case err != nil:
		return err
	case res == nil:
		return printNothingToRecover(env, o.format, o.issue)
	case o.format == "json":
		return printIndented(env, res)
	}
	var b strings.Builder
	res.WriteText(&b, o.repo)
	printUntrusted(env, b.String())
	return nil
}

// printNothingToRecover says the checkpoint is valid: a line, or under
// --format json a result with no problem and no proposal.
func printNothingToRecover(env Env, format string, n int64) error {
	if format == "json" {
		return printJSON(env, agentwrite.Nothing(n))
	}
	_, err := fmt.Fprintf(env.Stdout, "gns-guard: recover: issue #%d: the checkpoint is valid; "+
		"nothing to recover (run 'gns-guard check' on the body, or read the guard's status comment)\n", n)
	return err
}

// connect checks the flags, connects and resolves the configuration; with
// --apply, it makes sure first that the token's user may write.
func (o *recoverOptions) connect(ctx context.Context, env Env) (agentwrite.Conn, error) {
	reader, err := o.open("recover", env)
	if err != nil {
		return agentwrite.Conn{}, err
	}
	set, err := o.resolve(ctx, "recover", env, reader)
	if err != nil {
		return agentwrite.Conn{}, err
	}
	conn := agentwrite.Conn{Reader: reader, Client: reader.Client, Config: set.Config, Now: env.Now}
	if !o.apply {
		return conn, nil
	}
	// Who may write is known before anything is read.
	if err := conn.Approve(ctx, set.Config.BudgetAdmins); err != nil {
		return agentwrite.Conn{}, err
	}
	return conn, nil
}
