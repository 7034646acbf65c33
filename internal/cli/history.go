package cli

import (
	"context"
	"flag"

	"github.com/gns-guard/gns-guard/internal/history"
	"github.com/gns-guard/gns-guard/internal/live"
)

// historyOptions are the parsed flags of `history`.
type historyOptions struct {
	issueFlags
	format     string
	trust      string
	noVerify   bool
	verify     bool
	publicKeys stringList
}

// historyFlags declares the flags of `history`.
func historyFlags(fs *flag.FlagSet) options {
	o := &historyOptions{}
	o.issueFlags.add(fs)
	fs.StringVar(&o.format, "format", "yaml", "output format: `yaml|json`")
	fs.StringVar(&o.trust, "trust", "", "the same as --guard-user: the `LOGIN` whose archive comments are trusted")
	fs.BoolVar(&o.noVerify, "no-verify", false, "read the archives without proving their chain (archives are checked by their hash only, "+
		"ordered by comment id)")
	fs.BoolVar(&o.verify, "verify", false, "check every signature (the ledger record and every archive part) with the repository's published "+
		"ledger-public-key, holding no secret, and print a one-line summary instead of the history")
	fs.Var(&o.publicKeys, "public-key", "a public `KEY` (ed25519:..., as gns-guard pubkey prints it) --verify checks with instead of "+
		"ledger-public-key; repeat it for a key rotated out")
	return o
}

func (o *historyOptions) validate(_ *flag.FlagSet, pos []string, _ Env) error {
	if err := noPositional("history", pos); err != nil {
		return err
	}
	switch {
	case o.format != "yaml" && o.format != "json":
		return usageError("history: --format must be yaml or json, not %q", o.format)
	case o.noVerify && o.ledgerKeyEnv != "":
		return usageError("history: --no-verify and --ledger-key-env exclude each other")
	case o.verify && o.noVerify:
		return usageError("history: --verify and --no-verify exclude each other")
	case o.verify && o.ledgerKeyEnv != "":
		return usageError("history: --verify checks with the public key and needs no secret: drop --ledger-key-env (or drop --verify to check " +
			"with the secret)")
	case len(o.publicKeys) > 0 && !o.verify:
		return usageError("history: --public-key is what --verify checks with: add --verify")
	case o.trust != "" && o.guardUser != "" && o.trust != o.guardUser:
		return usageError("history: --trust %s and --guard-user %s name different users", o.trust, o.guardUser)
	}
	o.guardUser = firstOf(o.guardUser, o.trust)
	return nil
}

// runHistory prints an issue's full history, rebuilt from its archive
// comments and the checkpoint's tail, its chain proven (package history).
// Problems go to standard error, naming the comment, and exit 1. With
// --verify it checks every signature with the published public key and
// prints a one-line summary.
func runHistory(ctx context.Context, o *historyOptions, env Env) error {
	reader, s, err := o.read(ctx, env)
	if err != nil {
		return err
	}
	done, cancel := deadline(ctx)
	defer cancel()
	in := history.Input{Snapshot: s, Issue: o.issue, Keys: reader.Keys, Unproven: o.noVerify, Done: done}
	if o.verify {
		return printVerify(env, o.format, history.Verify(in))
	}
	h := history.Rebuild(in)
	if err := printHistory(env, o.format, h); err != nil {
		return err
	}
	h.WriteProblems(env.Stderr)
	if len(h.Problems) > 0 {
		return errViolations
	}
	return nil
}

// printHistory prints the entries as JSON, or as YAML (which holds
// agents' text, so it is printed as untrusted).
func printHistory(env Env, format string, h history.Result) error {
	if format == "json" {
		return printIndented(env, h.Entries)
	}
	text, err := h.YAML()
	if err != nil {
		return cannotRun(err)
	}
	printUntrusted(env, text)
	return nil
}

// printVerify prints the verification: the JSON report, or the summary
// line on standard output and each problem and note on standard error.
// Any problem exits 1.
func printVerify(env Env, format string, r history.Report) error {
	if format == "json" {
		if err := printJSON(env, r); err != nil {
			return err
		}
	} else {
		r.WriteText(env.Stdout, env.Stderr)
	}
	if !r.Verified {
		return errViolations
	}
	return nil
}

// read connects and reads the whole issue; with --verify, the keys are
// the published public ones.
func (o *historyOptions) read(ctx context.Context, env Env) (*live.Reader, *live.Snapshot, error) {
	reader, err := o.open("history", env)
	if err != nil {
		return nil, nil, err
	}
	if o.verify {
		if err := o.verifyKeys(ctx, env, reader); err != nil {
			return nil, nil, err
		}
	}
	s, err := reader.Read(ctx, o.issue, live.ReadOptions{All: true})
	if err != nil {
		return nil, nil, err
	}
	return reader, s, nil
}

// verifyKeys are the keys `history --verify` checks with (history.Keys):
// the --public-key values, else the repository's published
// ledger-public-key (its configuration file, or --config FILE). They key
// the reader.
func (o *historyOptions) verifyKeys(ctx context.Context, env Env, rd *live.Reader) (err error) {
	var published, where string
	if len(o.publicKeys) == 0 {
		set, err := o.resolve(ctx, "history", env, rd)
		if err != nil {
			return err
		}
		published, where = set.LedgerPublicKey, live.ConfigFile+" of the default branch"
		if o.config != "" {
			where = o.config
		}
	}
	rd.Keys, err = history.Keys(o.publicKeys, published, where, LedgerKeyEnv)
	return err
}
