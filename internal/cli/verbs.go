package cli

import (
	"context"
	"flag"
	"slices"
	"strings"
)

// verb is one row of the verb table: the one place a verb is listed. The
// usage text, the dispatch, the hint after a usage error and the help all
// read it.
//
// Every verb runs in the same steps: options → parse → run → print. flags
// declares the verb's flags, bound to a new options value; parse fills it
// in from the arguments and settles it (options.settle); run does the work
// on the options and prints the answer. Parsing is apart from running, so
// each is tested alone.
type verb struct {
	name string
	// aliases are other arguments that call the verb (--version).
	aliases []string
	// usage are the verb's lines in the top-level usage, each after
	// "gns-guard ".
	usage []string
	// synopsis opens the verb's help: "Usage: gns-guard " + synopsis.
	synopsis string
	// about, when set, follows the synopsis in the help: what the verb
	// does, for a verb whose flags do not say it.
	about string
	// required are the flags the verb cannot run without, as its help
	// lists and marks them.
	required []string
	// example is one command line the help shows.
	example string
	// flags declares the verb's flags on fs, bound to the new options value
	// it returns. nil: the verb takes no flags and has no help (action: its
	// inputs are described in action.yml).
	flags func(fs *flag.FlagSet) options
	// run does the verb's work on its parsed options and prints the answer.
	run func(ctx context.Context, o options, env Env) error
}

// options are a verb's parsed flags and positional arguments.
type options interface {
	// settle checks the options once the flags are parsed, with the
	// positional arguments, and works out what they imply.
	settle(fs *flag.FlagSet, pos []string, env Env) error
}

// runs adapts a verb's run step, which takes its own options type, to the
// verb table.
func runs[O options](run func(context.Context, O, Env) error) func(context.Context, options, Env) error {
	return func(ctx context.Context, o options, env Env) error { return run(ctx, o.(O), env) }
}

// verbs is the verb table, in the order usage lists the verbs.
var verbs = []verb{
	{
		name:     "check",
		usage:    []string{"check FILE|- [--format text|json] [--issue N] [--labels L1,L2]"},
		synopsis: "check FILE|- [flags]",
		example:  "gns-guard check examples/issues/depth-exceeded.md --labels cascade::depth-2,size::medium",
		flags:    checkFlags,
		run:      runs(runCheck),
	},
	{
		name:     "prune",
		usage:    []string{"prune FILE|- [--format text|json]"},
		synopsis: "prune FILE|- [flags]",
		example:  "gns-guard prune body.md > pruned.md",
		flags:    pruneFlags,
		run:      runs(runPrune),
	},
	{
		name:     "history",
		usage:    []string{"history --repo OWNER/NAME --issue N [--server URL] [--token T] [--format yaml|json]"},
		synopsis: "history --repo OWNER/NAME --issue N [flags]",
		required: []string{"repo", "issue"},
		example:  "gns-guard history --repo acme/app --issue 2 --format json",
		flags:    historyFlags,
		run:      runs(runHistory),
	},
	{
		name:     "tokens",
		usage:    []string{"tokens FILE|- [--encoding cl100k_base|o200k_base] [--format text|json]"},
		synopsis: "tokens FILE|- [--encoding cl100k_base|o200k_base] [--format text|json]",
		example:  "gns-guard tokens --encoding o200k_base docs/contract.md",
		flags:    tokensFlags,
		run:      runs(runTokens),
	},
	{
		name: "context",
		usage: []string{
			"context --repo OWNER/NAME --issue N [--file PATH]... [--skill PATH] [--size S] [--cap TOKENS] [--format text|json]",
			"context --body FILE [--comments FILE] [flags]   (offline)",
		},
		synopsis: "context (--repo OWNER/NAME --issue N | --body FILE [--comments FILE]) [--file PATH]... [--skill PATH] [--size tiny|small|medium|large] [--cap TOKENS] [--full-comments] [--format text|json] [flags]",
		example:  "gns-guard context --repo acme/app --issue 2 --file internal/limits/bucket.go --skill .kilo/skills/review.md",
		flags:    contextFlags,
		run:      runs(runContext),
	},
	{
		name:     "report",
		usage:    []string{"report --repo OWNER/NAME --issue N --agent NAME --invocation ID --consumed TOKENS --action TEXT [flags]"},
		synopsis: "report --repo OWNER/NAME --issue N --agent NAME --invocation ID --consumed TOKENS --action TEXT [--status ok|failed] [--verdict TEXT] [--files-changed N] [--key-stats TEXT] [--next-agent NAME --next-estimate TOKENS] [--result-file FILE] [--phase P] [--depth D] [--labels-add L,..] [--labels-remove L,..] [--assignee NAME] [--current-task TEXT] [--dry-run] [--force] [--format text|json] [flags]",
		required: []string{"repo", "issue", "agent", "invocation", "consumed", "action"},
		example:  `gns-guard report --repo acme/app --issue 2 --agent lead-developer --invocation run-41 --consumed 2800 --action "implemented the limiter" --next-agent code-reviewer --next-estimate 1500 --result-file result.md`,
		flags:    reportFlags,
		run:      runs(runReport),
	},
	{
		name:     "recover",
		usage:    []string{"recover --repo OWNER/NAME --issue N [--apply] [--ledger-key-env NAME] [--format text|json]"},
		synopsis: "recover --repo OWNER/NAME --issue N [--apply] [--ledger-key-env NAME] [--budget-admins L,..] [--guard-user LOGIN] [--format text|json] [--server URL] [--token T]",
		required: []string{"repo", "issue"},
		example:  "gns-guard recover --repo acme/app --issue 2 --apply",
		flags:    recoverFlags,
		run:      runs(runRecover),
	},
	{
		name:     "status",
		usage:    []string{"status --repo OWNER/NAME [--format text|json|markdown] [--publish]"},
		synopsis: "status --repo OWNER/NAME [--format text|json|markdown] [--publish] [--server URL] [--token T] [--config FILE] [--SETTING VALUE]...",
		required: []string{"repo"},
		example:  "gns-guard status --repo acme/app --format markdown",
		flags:    statusFlags,
		run:      runs(runStatus),
	},
	{
		name:     "mcp",
		usage:    []string{"mcp [--server URL] [--token T] [--repo OWNER/NAME]   (a Model Context Protocol server on stdio)"},
		synopsis: "mcp [--server URL] [--token T] [--repo OWNER/NAME] [--ledger-key-env NAME] [--format text|json]",
		flags:    mcpFlags,
		run:      runs(mcpVerb),
	},
	{
		name:     "init",
		usage:    []string{"init --repo OWNER/NAME [--server URL] [--token T] [--commit] [--dry-run] [--format text|json]"},
		synopsis: "init --repo OWNER/NAME [--server URL] [--token T] [--commit] [--dry-run] [--format text|json]",
		required: []string{"repo"},
		example:  "gns-guard init --repo acme/app --server https://gitea.example.com --dry-run",
		flags:    initFlags,
		run:      runs(runInit),
	},
	{
		name:     "doctor",
		usage:    []string{"doctor --repo OWNER/NAME [--admin-token T] [--format text|json]"},
		synopsis: "doctor --repo OWNER/NAME [--server URL] [--token T] [--admin-token T] [--format text|json]",
		flags:    doctorFlags,
		run:      runs(runDoctor),
	},
	{
		name:     "keygen",
		usage:    []string{"keygen [--format text|json]"},
		synopsis: "keygen [--format text|json]",
		example:  "gns-guard keygen --format json",
		flags:    keygenFlags,
		run:      runs(runKeygen),
	},
	{
		name:     "pubkey",
		usage:    []string{"pubkey [--format text|json]    (the public key of $" + LedgerKeyEnv + ")"},
		synopsis: "pubkey [--format text|json]   (reads $" + LedgerKeyEnv + ")",
		example:  "GNS_GUARD_LEDGER_KEY=... gns-guard pubkey",
		flags:    pubkeyFlags,
		run:      runs(runPubkey),
	},
	{
		name:     "schema",
		usage:    []string{"schema"},
		synopsis: "schema [--history-tail N] [--format json]",
		example:  "gns-guard schema --history-tail 5 > checkpoint.schema.json",
		flags:    schemaFlags,
		run:      runs(runSchema),
	},
	{
		name:     "rules",
		usage:    []string{"rules [--format text|json]"},
		synopsis: "rules [--format text|json]",
		example:  "gns-guard rules --format json",
		flags:    rulesFlags,
		run:      runs(runRules),
	},
	{
		name:     "version",
		aliases:  []string{"--version", "-version"},
		usage:    []string{"version [--format text|json]   (or gns-guard --version)"},
		synopsis: "version [--format text|json]",
		example:  "gns-guard version --format json",
		flags:    versionFlags,
		run:      runs(runVersion),
	},
	{
		name:     "action",
		usage:    []string{"action        (the default when GITHUB_ACTIONS=true)"},
		synopsis: "action",
		about:    actionAbout,
		run:      func(ctx context.Context, _ options, env Env) error { return runAction(ctx, env) },
	},
}

// verbNamed finds a verb by its name.
func verbNamed(name string) (verb, bool) {
	for _, v := range verbs {
		if v.name == name {
			return v, true
		}
	}
	return verb{}, false
}

// verbCalled finds the verb an argument calls: by its name or an alias.
func verbCalled(arg string) (verb, bool) {
	for _, v := range verbs {
		if v.name == arg || slices.Contains(v.aliases, arg) {
			return v, true
		}
	}
	return verb{}, false
}

// verbNames are the verbs' names, comma-separated, as errors list them.
func verbNames() string {
	names := make([]string, len(verbs))
	for i, v := range verbs {
		names[i] = v.name
	}
	return strings.Join(names, ", ")
}

// parse is a verb's parse step: the flags, wherever they stand among the
// positional arguments, then the options' own checks (settle). -h prints
// the verb's help and returns flag.ErrHelp.
func (v verb) parse(args []string, env Env) (options, error) {
	fs := newFlags(v, env)
	o := v.flags(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return nil, err
	}
	if err := o.settle(fs, pos, env); err != nil {
		return nil, err
	}
	return o, nil
}

// actionAbout is the help of `action`, which takes no flags: its inputs
// are the step's.
const actionAbout = `Runs the guard as the Gitea Actions step on the event the runner hands it
(GITHUB_EVENT_PATH): reads the issue, judges it, writes the plan. Its
inputs come from INPUT_* variables, as action.yml describes them
(docs/configuration.md lists every one); it takes no flags or arguments.`

// exec runs the verb on its arguments: parse, then run. A verb without
// flags (action) takes no arguments but -h.
func (v verb) exec(ctx context.Context, args []string, env Env) error {
	if v.flags == nil {
		switch {
		case len(args) > 0 && isHelp(args[0]):
			printHelp(env.Stdout, flag.NewFlagSet(v.name, flag.ContinueOnError), v)
			return flag.ErrHelp
		case len(args) > 0:
			return usageError("%s takes no arguments, got: %s (its inputs are INPUT_* variables; see 'gns-guard %s -h')", v.name, strings.Join(args, " "), v.name)
		}
		return v.run(ctx, nil, env)
	}
	o, err := v.parse(args, env)
	if err != nil {
		return err
	}
	return v.run(ctx, o, env)
}

// usageHead and usageFoot frame the verbs' lines in the usage text.
const (
	usageHead = `gns-guard guards GNS-2 agent workflows kept in Gitea issues.

Usage:
`
	usageFoot = `
Every verb takes --format json (errors, too, are then one JSON object on
standard output).

Exit codes: 0 clean, 1 violations, 2 usage or configuration error, 3 could not run.
Run 'gns-guard VERB -h' for a verb's flags.
`
)

// usageText is what gns-guard -h prints: every verb's usage lines.
func usageText() string {
	var b strings.Builder
	b.WriteString(usageHead)
	for _, v := range verbs {
		for _, line := range v.usage {
			b.WriteString("  gns-guard " + line + "\n")
		}
	}
	b.WriteString(usageFoot)
	return b.String()
}
