package cli

import (
	"context"
	"flag"
	"slices"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/flagdoc"
)

// verb is one row of the verb table, the one place a verb is listed: the
// usage, the dispatch, the hint after a usage error and the help read it.
// Every verb runs options → parse → run → print; parsing is apart from
// running, so each is tested alone.
type verb struct {
	name string
	// aliases are other arguments that call the verb (--version).
	aliases []string
	// args are the verb's positional arguments as its synopsis shows
	// them: FILE|-.
	args string
	// required declares the flags the verb cannot run without: every flag
	// of one group (all), or of one of several (either: context takes
	// --repo and --issue, or --body). The synopsis, the help's marks and
	// the MCP schema read it; the flags themselves say their values.
	required [][]string
	// note follows the verb's line in the top-level usage.
	note string
	// about, when set, follows the synopsis in the help: what the verb
	// does, for a verb whose flags do not say it.
	about string
	// example is one command line the help shows.
	example string
	// flags declares the verb's flags on fs, bound to the new options value
	// it returns. nil: the verb takes no flags and has no help (action: its
	// inputs are described in action.yml).
	flags func(fs *flag.FlagSet) options
	// run does the verb's work on its parsed options and prints the answer.
	run func(ctx context.Context, o options, env Env) error
	// drain is how long the verb may wind down after SIGTERM or SIGINT
	// (0: graceAfterSignal): the meter lets calls in flight finish.
	drain time.Duration
}

// all declares flags a verb requires together.
func all(flags ...string) [][]string { return [][]string{flags} }

// either declares alternative groups of required flags.
func either(groups ...[]string) [][]string { return groups }

// options are a verb's parsed flags and positional arguments.
type options interface {
	// validate checks the options once the flags are parsed, with the
	// positional arguments, and works out what they imply.
	validate(fs *flag.FlagSet, pos []string, env Env) error
}

// runs adapts a verb's run step, which takes its own options type, to the
// verb table.
func runs[O options](run func(context.Context, O, Env) error) func(context.Context, options, Env) error {
	return func(ctx context.Context, o options, env Env) error { return run(ctx, o.(O), env) }
}

// verbs is the verb table, in the order usage lists the verbs.
var verbs = []verb{
	{
		name:    "check",
		args:    "FILE|-",
		example: "gns-guard check examples/issues/depth-exceeded.md --labels cascade::depth-2,size::medium",
		flags:   checkFlags,
		run:     runs(runCheck),
	},
	{
		name:    "prune",
		args:    "FILE|-",
		example: "gns-guard prune body.md > pruned.md",
		flags:   pruneFlags,
		run:     runs(runPrune),
	},
	{
		name:     "history",
		required: all("repo", "issue"),
		example:  "gns-guard history --repo acme/app --issue 2 --format json",
		flags:    historyFlags,
		run:      runs(runHistory),
	},
	{
		name:    "tokens",
		args:    "FILE|-",
		example: "gns-guard tokens --encoding o200k_base docs/contract.md",
		flags:   tokensFlags,
		run:     runs(runTokens),
	},
	{
		name:     "context",
		required: either([]string{"repo", "issue"}, []string{"body"}),
		example:  "gns-guard context --repo acme/app --issue 2 --file internal/limits/bucket.go --skill .kilo/skills/review.md",
		flags:    contextFlags,
		run:      runs(runContext),
	},
	{
		name:     "report",
		required: all("repo", "issue", "agent", "consumed", "action"),
		example: `gns-guard report --repo acme/app --issue 2 --agent lead-developer --invocation run-41 --consumed 2800 ` +
			`--action "implemented the limiter" --next-agent code-reviewer --next-estimate 1500 --result-file result.md`,
		flags: reportFlags,
		run:   runs(runReport),
	},
	{
		name:     "spawn",
		required: all("repo", "issue", "agent", "estimate"),
		about:    "In the gated posture, ask the gate for an invocation: a root for your agent, or a sub-agent under --parent.",
		example:  "gns-guard spawn --repo acme/app --issue 2 --parent gate-3f9a1c2b7d40 --agent code-reviewer --estimate 1500",
		flags:    spawnFlags,
		run:      runs(runSpawn),
	},
	{
		name:     "recover",
		required: all("repo", "issue"),
		example:  "gns-guard recover --repo acme/app --issue 2 --apply",
		flags:    recoverFlags,
		run:      runs(runRecover),
	},
	{
		name:     "status",
		required: all("repo"),
		example:  "gns-guard status --repo acme/app --format markdown",
		flags:    statusFlags,
		run:      runs(runStatus),
	},
	{
		name:  "mcp",
		note:  "(a Model Context Protocol server on stdio)",
		flags: mcpFlags,
		run:   runs(mcpVerb),
	},
	{
		name:     "init",
		required: all("repo"),
		example:  "gns-guard init --repo acme/app --server https://gitea.example.com --dry-run",
		flags:    initFlags,
		run:      runs(runInit),
	},
	{
		name:     "doctor",
		required: all("repo"),
		example:  "gns-guard doctor --repo acme/app --format json",
		flags:    doctorFlags,
		run:      runs(runDoctor),
	},
	{
		name:    "keygen",
		example: "gns-guard keygen --format json",
		flags:   keygenFlags,
		run:     runs(runKeygen),
	},
	{
		name:    "pubkey",
		note:    "(the public key of $" + LedgerKeyEnv + ")",
		example: "GNS_GUARD_LEDGER_KEY=... gns-guard pubkey",
		flags:   pubkeyFlags,
		run:     runs(runPubkey),
	},
	{
		name:    "schema",
		example: "gns-guard schema --history-tail 5 > checkpoint.schema.json",
		flags:   schemaFlags,
		run:     runs(runSchema),
	},
	{
		name:    "rules",
		example: "gns-guard rules --format json",
		flags:   rulesFlags,
		run:     runs(runRules),
	},
	{
		name:    "version",
		aliases: []string{"--version", "-version"},
		note:    "(or gns-guard --version)",
		example: "gns-guard version --format json",
		flags:   versionFlags,
		run:     runs(runVersion),
	},
	{
		name:    "meter",
		note:    "(the model-API proxy that meters every call)",
		example: "GNS_GUARD_METER_KEY=... OPENAI_API_KEY=... gns-guard meter --server https://gitea.example.com --scope acme --listen :8787",
		flags:   meterFlags,
		run:     runs(runMeter),
		drain:   time.Hour,
	},
	{
		name:  "action",
		note:  "(the default when GITHUB_ACTIONS=true)",
		about: actionAbout,
		run:   func(ctx context.Context, _ options, env Env) error { return runAction(ctx, env) },
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
// positional arguments, then the options' own checks (validate). -h prints
// the verb's help and returns flag.ErrHelp.
func (v verb) parse(args []string, env Env) (options, error) {
	fs := newFlags(v, env)
	o := v.flags(fs)
	pos, err := flagdoc.Parse(fs, args)
	if err != nil {
		return nil, err
	}
	if err := o.validate(fs, pos, env); err != nil {
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
			v.doc().Help(env.Stdout, flag.NewFlagSet(v.name, flag.ContinueOnError))
			return flag.ErrHelp
		case len(args) > 0:
			return onTheLine(usageError("%s takes no arguments, got: %s (its inputs are INPUT_* variables; see 'gns-guard %s -h')",
				v.name, strings.Join(args, " "), v.name))
		}
		return v.run(ctx, nil, env)
	}
	o, err := v.parse(args, env)
	if err != nil {
		return onTheLine(err)
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

Exit codes: 0 clean, 1 violations, 2 usage or configuration error, 3 could not run,
4 (doctor) every check made holds but some could not be made.
Run 'gns-guard VERB -h' for a verb's flags.
`
)

// usageText is what gns-guard -h prints: every verb's usage lines.
func usageText() string {
	var b strings.Builder
	b.WriteString(usageHead)
	for _, v := range verbs {
		for _, line := range v.usageLines() {
			b.WriteString("  gns-guard " + line + "\n")
		}
	}
	b.WriteString(usageFoot)
	return b.String()
}
