package cli

import (
	"context"
	"flag"
	"time"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/offline"
	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/gns-guard/gns-guard/internal/tokens"
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
	body, counter, err := o.read(env, o.config.Encoding)
	if err != nil {
		return err
	}
	done, cancel := deadline(ctx)
	defer cancel()
	rep := offline.Check(o.input(body, counter, env.Now().UTC(), done))
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
	// resolve reads --config and the settings' flags into config.
	resolve func(verb string, env Env) (config.Config, error)
	config  config.Config
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
	cfg, err := o.resolve(verb, env)
	if err != nil {
		return err
	}
	o.config = cfg
	o.labels = liveLabels(fs, o.labelsFlag)
	return nil
}

// input is what the offline decision reads of the options and the body.
func (o *offlineOptions) input(body string, counter *tokens.Counter, now time.Time, done <-chan struct{}) offline.Input {
	return offline.Input{
		Source:  o.source(),
		Body:    body,
		Issue:   o.issue,
		Labels:  o.labels,
		Config:  o.config,
		Counter: counter,
		Now:     now,
		Done:    done,
	}
}

// liveLabels is the list a --labels flag gives: nil when the flag was not
// given (the checkpoint's state.labels stand in for the live labels), and
// empty when it was given empty (the issue has no labels).
func liveLabels(fs *flag.FlagSet, value string) []string {
	if !givenFlags(fs)["labels"] {
		return nil
	}
	return append([]string{}, config.ParseList(value)...)
}

// offlineConfigFlags declares the flags of a verb that judges a body
// offline: --config FILE (a configuration file, as the repository's
// .gitea/gns-guard.yml) and a flag per setting of the table, which override
// the file. The returned function resolves them into the guard's Config.
func offlineConfigFlags(fs *flag.FlagSet) func(verb string, env Env) (config.Config, error) {
	file := fs.String("config", "", "a configuration `FILE` to judge with, as the repository's "+settings.FileName)
	flags := settings.Flags(fs)
	return func(verb string, env Env) (config.Config, error) {
		var layers []settings.Layer
		if *file != "" {
			l, err := localConfig(env, *file)
			if err != nil {
				return config.Config{}, err
			}
			layers = append(layers, l)
		}
		set, err := settings.Resolve(append(layers, flags())...)
		if err != nil {
			return set.Config, usageError("%s: %v", verb, err)
		}
		return set.Config, nil
	}
}
