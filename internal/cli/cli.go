package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/flagdoc"
	"github.com/gns-guard/gns-guard/internal/offline"
	"github.com/gns-guard/gns-guard/internal/version"
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
	// Action runs action mode (package action), wired by the binary: the
	// command line's verbs never reach into it. Nil: this program has no
	// action mode.
	Action func(context.Context, Env) error
	// Meter serves the meter, wired by the binary: nil in a build
	// without it (the guard's step image).
	Meter func(context.Context, MeterStart) error
}

// System returns the Env of the running process.
func System() Env {
	return Env{
		Stdin:    os.Stdin,
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
		Getenv:   os.Getenv,
		ReadFile: readFileCapped,
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

// errTooLarge says a file holds more than maxInput bytes: it was not read
// whole.
var errTooLarge = fmt.Errorf("over %d MiB", maxInput>>20)

// readFileCapped reads a named file, but never more than maxInput+1 bytes
// of it (a device such as /dev/zero, or a huge file, must not exhaust
// memory): a longer file is an error that wraps errTooLarge.
func readFileCapped(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxInput+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxInput {
		return nil, &os.PathError{Op: "read", Path: name, Err: errTooLarge}
	}
	return data, nil
}

// usageError is a mistake in how the command was called: exit 2.
func usageError(format string, args ...any) error {
	return &exitcode.UsageError{Err: fmt.Errorf(format, args...)}
}

// cannotRun is a failure to do the work at all: exit 3.
func cannotRun(err error) error {
	return &exitcode.CannotRunError{Err: err}
}

// errViolations says findings were reported: exit 1, and nothing more to print.
var errViolations = exitcode.ErrViolations

// Main runs the command line args and returns the exit code: the one place
// an outcome becomes a code (package exitcode). An error the verb did not
// answer is one JSON object on standard output under --format json
// (exitcode.JSON), else one line on standard error, a usage error's
// followed by a hint.
func Main(ctx context.Context, args []string, env Env) int {
	ctx, stop := withSignals(ctx)
	defer stop()
	out := &countingWriter{w: env.Stdout}
	env.Stdout = out
	asJSON := wantsJSON(args)
	err := untilStopped(ctx, drainOf(args), func() error { return runSafely(ctx, args, env) })
	if errors.Is(err, flag.ErrHelp) {
		return exitcode.Clean
	}
	err = howToFinish(err, args)
	code := exitcode.Code(err)
	if code == exitcode.Clean {
		return code
	}
	if asJSON && out.written() == 0 {
		// The verb printed no report: the error is the answer.
		fmt.Fprintf(env.Stdout, "%s\n", exitcode.JSON(err))
		return code
	}
	if err == exitcode.ErrViolations || err == exitcode.ErrUnchecked || exitcode.IsReported(err) {
		return code
	}
	fmt.Fprintf(env.Stderr, "gns-guard: %s\n", oneLine(err.Error()))
	if _, onTheLine := errors.AsType[commandLineError](err); onTheLine {
		if hint := usageHint(args, env); hint != "" {
			fmt.Fprintln(env.Stderr, hint)
		}
	}
	return code
}

// howToFinish adds to a report a signal stopped how to finish it: run it
// again with the same invocation, which writes nothing twice.
func howToFinish(err error, args []string) error {
	if _, stopped := errors.AsType[*exitcode.StoppedError](err); !stopped || len(args) == 0 || args[0] != "report" {
		return err
	}
	inv := flagValue(args[1:], "invocation")
	if inv == "" {
		inv = "ID"
	}
	return fmt.Errorf("%w; a write may have been made: run the same report again with --invocation %s to finish it (nothing is written twice)", err, inv)
}

// flagValue is the last value args give the flag name (--name v,
// --name=v, one dash or two), or "".
func flagValue(args []string, name string) string {
	value := ""
	for i, a := range args {
		if a == "--" {
			break
		}
		n, v, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || n != name {
			continue
		}
		switch {
		case hasValue:
			value = v
		case i+1 < len(args):
			value = args[i+1]
		}
	}
	return value
}

// runSafely runs the arguments. Nothing on any input may crash the
// program: a panic is a bug, reported as one with its stack on standard
// error, and the run could not be done (exit 3).
func runSafely(ctx context.Context, args []string, env Env) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e := cannotRun(fmt.Errorf("internal error: %v (a bug in gns-guard; please report it with the command that caused it)", r))
			fmt.Fprintf(env.Stderr, "gns-guard: %v\n%s", e, debug.Stack())
			err = &exitcode.Reported{Err: e}
		}
	}()
	return run(ctx, args, env)
}

// wantsJSON says the arguments ask for --format json (or --format=json;
// the last --format counts, as the flag package has it).
func wantsJSON(args []string) bool { return flagValue(args, "format") == "json" }

// commandLineError is a mistake in the command line itself (a flag, an
// argument, the verb): the usage hint follows it. A usage error found
// while working (an issue that does not exist, a broken settings file)
// gets no hint: the help would not fix it.
type commandLineError struct{ error }

func (e commandLineError) Unwrap() error { return e.error }

// onTheLine marks err, if any, as a mistake in the command line: a usage
// error that is not about an input's content (inputError).
func onTheLine(err error) error {
	if _, input := errors.AsType[inputError](err); input || exitcode.Code(err) != exitcode.Usage || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return commandLineError{err}
}

// inputError is a usage error about what a file holds or how large it is,
// found while the arguments are validated: the help would not fix it.
type inputError struct{ error }

func (e inputError) Unwrap() error { return e.error }

// usageHint is the line that follows a usage error: where the help is.
// Action mode has none (its inputs are described in action.yml).
func usageHint(args []string, env Env) string {
	if len(args) == 0 {
		if env.Getenv("GITHUB_ACTIONS") == "true" {
			return ""
		}
		return "Run 'gns-guard -h' for usage."
	}
	v, ok := verbCalled(args[0])
	switch {
	case !ok:
		return "Run 'gns-guard -h' for usage."
	case v.flags == nil:
		return ""
	}
	return fmt.Sprintf("Run 'gns-guard %s -h' for usage.", v.name)
}

// oneLine keeps a message on one line.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", " ")
}

// countingWriter counts what was written through it: whether a verb
// printed its answer before it failed.
type countingWriter struct {
	w io.Writer
	n atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// written is how many bytes were written through c.
func (c *countingWriter) written() int64 { return c.n.Load() }

// run dispatches the arguments to the verb they call. With none, it runs
// the action inside Gitea Actions and is a usage error elsewhere.
func run(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 {
		if env.Getenv("GITHUB_ACTIONS") == "true" {
			return runAction(ctx, env)
		}
		return onTheLine(usageError("no verb given; the verbs are %s", verbNames()))
	}
	first, rest := args[0], args[1:]
	if v, ok := verbCalled(first); ok {
		return v.exec(ctx, rest, env)
	}
	if isHelp(first) {
		return help(ctx, rest, env)
	}
	names := make([]string, len(verbs))
	for i, v := range verbs {
		names[i] = v.name
	}
	return onTheLine(usageError("unknown verb %q%s; the verbs are %s", first, flagdoc.DidYouMean(first, names, ""), verbNames()))
}

// isHelp says an argument asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

// help prints a verb's help (help VERB), else the usage text.
func help(ctx context.Context, rest []string, env Env) error {
	if len(rest) > 0 {
		if v, ok := verbNamed(rest[0]); ok {
			return v.exec(ctx, []string{"-h"}, env)
		}
	}
	fmt.Fprint(env.Stdout, usageText())
	return nil
}

// formatOptions are the options of a verb that takes no arguments and
// only --format text|json: keygen, pubkey, rules and version.
type formatOptions struct {
	verb   string
	format string
	// refuse is the usage error for arguments given; nil: noArgs's.
	refuse func(pos []string) error
}

// formatOnly declares the one flag of such a verb: --format, with help
// saying what each format prints.
func formatOnly(fs *flag.FlagSet, verb, formatHelp string, refuse func(pos []string) error) options {
	o := &formatOptions{verb: verb, refuse: refuse}
	fs.StringVar(&o.format, "format", "text", formatHelp)
	return o
}

func (o *formatOptions) validate(_ *flag.FlagSet, pos []string, _ Env) error {
	if len(pos) > 0 && o.refuse != nil {
		return o.refuse(pos)
	}
	if err := noArgs(o.verb, pos); err != nil {
		return err
	}
	return checkFormat(o.verb, o.format)
}

// versionFlags declares the flags of `version`.
func versionFlags(fs *flag.FlagSet) options {
	return formatOnly(fs, "version", "output format: `text|json`", nil)
}

// runVersion prints the build: one line, or a JSON object.
func runVersion(_ context.Context, o *formatOptions, env Env) error {
	if o.format == "json" {
		return printJSON(env, version.Info())
	}
	_, err := fmt.Fprintln(env.Stdout, version.String())
	return err
}

// noArgs refuses positional arguments to a verb that takes none.
func noArgs(verb string, pos []string) error {
	if len(pos) > 0 {
		return usageError("%s takes no arguments", verb)
	}
	return nil
}

// noPositional refuses positional arguments to a verb that takes only
// flags, naming them.
func noPositional(verb string, pos []string) error {
	if len(pos) > 0 {
		return usageError("%s takes no positional arguments, got: %s", verb, strings.Join(pos, " "))
	}
	return nil
}

// checkFormat accepts --format text or json.
func checkFormat(verb, format string) error {
	if format != "text" && format != "json" {
		return usageError("%s: --format must be text or json, not %q", verb, format)
	}
	return nil
}

// runAction runs action mode through the binary's wiring.
func runAction(ctx context.Context, env Env) error {
	if env.Action == nil {
		return usageError("action mode is not wired into this program: run the gns-guard binary")
	}
	return env.Action(ctx, env)
}

// fileOptions are the FILE argument and --format of a verb that reads
// one file, or standard input for "-": check, prune and tokens.
type fileOptions struct {
	verb   string
	name   string
	format string
}

// validateFile takes the one FILE argument and checks --format.
func (o *fileOptions) validateFile(verb string, pos []string) error {
	name, err := oneArg(verb, pos)
	if err != nil {
		return err
	}
	o.verb, o.name = verb, name
	return checkFormat(verb, o.format)
}

// source is the name the file is reported under: FILE, or stdin.
func (o *fileOptions) source() string {
	if o.name == "-" {
		return "stdin"
	}
	return o.name
}

// read reads the file (capped, as readInput). check and prune read an
// issue body, which is UTF-8 text (readText); tokens counts any bytes, as
// tiktoken does once it has replaced what is not UTF-8.
func (o *fileOptions) read(env Env) (string, error) {
	if o.verb == "tokens" {
		return readInput(env, o.name)
	}
	return readText(env, o.verb, "issue body", o.name, maxInput)
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// givenFlags are the names of the flags the arguments gave.
func givenFlags(fs *flag.FlagSet) map[string]bool {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return given
}

// readInput reads FILE, or standard input for "-".
func readInput(env Env, name string) (string, error) {
	var data []byte
	var err error
	if name == "-" {
		if env.Stdin != nil {
			data, err = io.ReadAll(io.LimitReader(env.Stdin, maxInput+1))
		}
	} else {
		data, err = env.ReadFile(name)
	}
	if errors.Is(err, errTooLarge) || err == nil && len(data) > maxInput {
		return "", inputError{usageError("%s is over %d MiB; an issue body is far smaller", name, maxInput>>20)}
	}
	if err != nil {
		return "", inputError{usageError("cannot read %s: %v", name, err)}
	}
	return string(data), nil
}

// deadline is the time limit of a verb's YAML parses; a signal that
// cancels ctx ends them too (the verb then answers ctx's error, not what
// the cut parse found).
func deadline(ctx context.Context) (<-chan struct{}, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, offline.ParseTimeout)
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
