package cli

import (
	"context"
	"flag"
	"time"

	"github.com/gns-guard/gns-guard/internal/offline"
	"github.com/gns-guard/gns-guard/internal/settings"
)

// checkOptions are the parsed flags and FILE of `check`.
type checkOptions struct {
	offlineOptions
}

// checkFlags declares the flags of `check`.
func checkFlags(fs *flag.FlagSet) options {
	o := &checkOptions{}
	o.declare(fs, "output format: `text|json`",
		"the issue's labels, comma-separated (`L1,L2`); --labels= says it has none (default: the checkpoint's state.labels)")
	return o
}

func (o *checkOptions) validate(fs *flag.FlagSet, pos []string, env Env) error {
	return o.validateOffline("check", fs, pos, env)
}

// runCheck validates a body (or a bare checkpoint) and runs the guard's
// decision on it offline: the labels are the checkpoint's state.labels
// unless --labels names the live ones, and there are no comments.
func runCheck(ctx context.Context, o *checkOptions, env Env) error {
	in, cancel, err := o.input(ctx, env, env.Now().UTC())
	if err != nil {
		return err
	}
	defer cancel()
	rep := offline.Check(in)
	if err := ctx.Err(); err != nil {
		return err
	}
	if o.format == "json" {
		if err := printJSON(env, rep); err != nil {
			return err
		}
	} else {
		rep.WriteText(env.Stdout, env.Stderr)
	}
	if !rep.Valid {
		return errViolations
	}
	return nil
}

// offlineOptions are the flags check and prune share: the FILE and
// --format, the issue's number, its live labels and the configuration to
// judge with.
type offlineOptions struct {
	fileOptions
	issue      int64
	labelsFlag string
	// labels are the live labels --labels gives: nil when it is not given.
	labels []string
	// resolve reads --config and the settings' flags into set.
	resolve func(verb string, env Env) (settings.Resolved, error)
	set     settings.Resolved
}

// declare declares the flags of an offline verb, with its own help for
// --format and --labels.
func (o *offlineOptions) declare(fs *flag.FlagSet, formatHelp, labelsHelp string) {
	fs.StringVar(&o.format, "format", "text", formatHelp)
	fs.Int64Var(&o.issue, "issue", 0, "the issue's number; checkpoint.issue must match it (0: take it from the checkpoint)")
	fs.StringVar(&o.labelsFlag, "labels", "", labelsHelp)
	o.resolve = offlineConfigFlags(fs)
}

// validateOffline takes the FILE, checks --format, resolves the
// configuration and reads --labels.
func (o *offlineOptions) validateOffline(verb string, fs *flag.FlagSet, pos []string, env Env) error {
	if err := o.validateFile(verb, pos); err != nil {
		return err
	}
	if givenFlags(fs)["issue"] && o.issue < 1 {
		return usageError("%s: --issue must be a positive issue number, not %d (leave it out to take the checkpoint's)", verb, o.issue)
	}
	set, err := o.resolve(verb, env)
	if err != nil {
		return err
	}
	o.set = set
	o.labels = liveLabels(fs, o.labelsFlag)
	return nil
}

// input reads the body and is what the offline decision reads, with the
// parse's deadline and the function that releases it.
func (o *offlineOptions) input(ctx context.Context, env Env, now time.Time) (offline.Input, context.CancelFunc, error) {
	body, err := o.read(env)
	if err != nil {
		return offline.Input{}, nil, err
	}
	in, err := offline.Input{Source: o.source(), Body: body, Issue: o.issue, Labels: o.labels, Config: o.set.Config, Now: now}.Counted()
	if err != nil {
		return in, nil, err
	}
	done, cancel := deadline(ctx)
	in.Done = done
	return in, cancel, nil
}

// liveLabels is the list a --labels flag gives: nil when the flag was not
// given (the checkpoint's state.labels stand in for the live labels), and
// empty when it was given empty (the issue has no labels).
func liveLabels(fs *flag.FlagSet, value string) []string {
	if !givenFlags(fs)["labels"] {
		return nil
	}
	return append([]string{}, settings.ParseList(value)...)
}

// offlineConfigFlags declares the flags of a verb that judges a body
// offline: --config FILE (a configuration file, as the repository's
// .gitea/gns-guard.yml) and a flag per setting of the table, which override
// the file. The returned function resolves them into the guard's Config.
func offlineConfigFlags(fs *flag.FlagSet) func(verb string, env Env) (settings.Resolved, error) {
	file := fs.String("config", "", "a configuration `FILE` to judge with, as the repository's "+settings.FileName)
	flags := settings.Flags(fs)
	return func(verb string, env Env) (settings.Resolved, error) { return resolveLocal(verb, env, *file, flags()) }
}

// resolveLocal resolves the settings of a verb with no server: the file,
// if any, under the flags.
func resolveLocal(verb string, env Env, file string, flags settings.Layer) (settings.Resolved, error) {
	var layers []settings.Layer
	if file != "" {
		l, err := localConfig(env, file)
		if err != nil {
			return settings.Resolved{}, err
		}
		layers = append(layers, l)
	}
	set, err := settings.Resolve(append(layers, flags)...)
	if err != nil {
		return set, usageError("%s: %v", verb, err)
	}
	return set, nil
}
