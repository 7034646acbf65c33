package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/action"
	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/exit"
	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/guard"
)

// Env is the world a command sees. Tests build their own; System returns the
// process's.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads an environment variable; nothing else reads the environment.
	Getenv func(string) string
	// ReadFile reads a named file.
	ReadFile func(string) ([]byte, error)
	// AppendFile appends to a named file, creating it.
	AppendFile func(string, []byte) error
	// Now reads the clock.
	Now func() time.Time
}

// System returns the Env of the running process.
func System() Env {
	return Env{
		Stdin:    os.Stdin,
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
		Getenv:   os.Getenv,
		ReadFile: os.ReadFile,
		AppendFile: func(name string, data []byte) error {
			f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			_, err = f.Write(data)
			return errors.Join(err, f.Close())
		},
		Now: time.Now,
	}
}

// usageError is a mistake in how the command was called: exit 2.
func usageError(format string, args ...any) error {
	return &exit.UsageError{Err: fmt.Errorf(format, args...)}
}

// cannotRun is a failure to do the work at all: exit 3.
func cannotRun(err error) error {
	return &exit.CannotRunError{Err: err}
}

// errViolations says findings were reported: exit 1, and nothing more to print.
var errViolations = exit.ErrViolations

const usage = `gns-guard guards GNS-2 agent workflows kept in Gitea issues.

Usage:
  gns-guard check FILE|- [--format text|json] [--issue N] [--labels L1,L2]
  gns-guard prune FILE [--format text|json]
  gns-guard history --repo OWNER/NAME --issue N [--server URL] [--token T] [--format yaml|json]
  gns-guard tokens FILE|- [--encoding cl100k_base|o200k_base]
  gns-guard context --repo OWNER/NAME --issue N [--file PATH]... [--skill PATH] [--size S] [--cap TOKENS] [--format text|json]
  gns-guard context --body FILE [--comments FILE] [flags]   (offline)
  gns-guard report --repo OWNER/NAME --issue N --agent NAME --invocation ID --consumed TOKENS --action TEXT [flags]
  gns-guard recover --repo OWNER/NAME --issue N [--apply] [--ledger-key-env NAME] [--format text|json]
  gns-guard schema
  gns-guard rules [--format text|json]
  gns-guard action        (the default when GITHUB_ACTIONS=true)

Exit codes: 0 clean, 1 violations, 2 usage or configuration error, 3 could not run.
Run 'gns-guard VERB -h' for a verb's flags.
`

// Main runs the command line args and returns the exit code: the one place
// where an outcome becomes a code (package exit's table).
func Main(ctx context.Context, args []string, env Env) int {
	err := run(ctx, args, env)
	if errors.Is(err, flag.ErrHelp) {
		return exit.Clean
	}
	code := exit.Code(err)
	if code == exit.Clean || err == exit.ErrViolations || exit.IsReported(err) {
		return code
	}
	fmt.Fprintf(env.Stderr, "gns-guard: %v\n", err)
	if code == exit.Usage && !strings.Contains(err.Error(), "-h") {
		fmt.Fprintln(env.Stderr, "Run 'gns-guard -h' for usage.")
	}
	return code
}

func run(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 {
		if env.Getenv("GITHUB_ACTIONS") == "true" {
			return runAction(ctx, env)
		}
		fmt.Fprint(env.Stderr, usage)
		return usageError("no verb given")
	}
	verb, rest := args[0], args[1:]
	switch verb {
	case "check":
		return runCheck(rest, env)
	case "prune":
		return runPrune(rest, env)
	case "history":
		return runHistory(ctx, rest, env)
	case "tokens":
		return runTokens(rest, env)
	case "context":
		return runContext(ctx, rest, env)
	case "report":
		return runReport(ctx, rest, env)
	case "recover":
		return runRecover(ctx, rest, env)
	case "schema":
		return runSchema(rest, env)
	case "rules":
		return runRules(rest, env)
	case "action":
		return runAction(ctx, env)
	case "-h", "--help", "help":
		fmt.Fprint(env.Stdout, usage)
		return nil
	}
	return usageError("unknown verb %q; the verbs are check, prune, history, tokens, context, report, recover, schema, rules, action", verb)
}

func runAction(ctx context.Context, env Env) error {
	return action.Run(ctx, action.Options{
		Getenv:     env.Getenv,
		Stdout:     env.Stdout,
		Stderr:     env.Stderr,
		ReadFile:   env.ReadFile,
		AppendFile: env.AppendFile,
		NewForge: func(apiURL, token, owner, repo string) (guard.Forge, error) {
			return forge.New(apiURL, token, owner, repo)
		},
		Now: env.Now,
	})
}

// newFlags returns a flag set for a verb that reports errors as usage errors.
func newFlags(verb string, env Env, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(verb, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "Usage: gns-guard %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags that may stand before or after the positional
// arguments, and returns the positional ones.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError("%s: %v", fs.Name(), err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// readInput reads FILE, or standard input for "-".
func readInput(env Env, name string) (string, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(io.LimitReader(env.Stdin, maxInput+1))
	} else {
		data, err = env.ReadFile(name)
	}
	if err != nil {
		return "", usageError("cannot read %s: %v", name, err)
	}
	if len(data) > maxInput {
		return "", usageError("%s is over %d MiB; an issue body is far smaller", name, maxInput>>20)
	}
	return string(data), nil
}

// deadline is the time limit of a verb's YAML parses.
func deadline() (<-chan struct{}, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), checkpoint.ParseTimeout)
	return ctx.Done(), cancel
}

// maxInput bounds what a verb reads (Gitea caps issue bodies well below it).
const maxInput = 32 << 20

func oneArg(verb string, pos []string) (string, error) {
	switch len(pos) {
	case 1:
		return pos[0], nil
	case 0:
		return "", usageError("%s needs a FILE (or - for standard input)", verb)
	}
	return "", usageError("%s takes one FILE, got %d: %s", verb, len(pos), strings.Join(pos, " "))
}
