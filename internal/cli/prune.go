package cli

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/gns-guard/gns-guard/internal/offline"
)

// pruneOptions are the parsed flags and FILE of `prune`.
type pruneOptions struct {
	offlineOptions
	nowFlag string
	now     time.Time // --now, when it is given
}

// pruneFlags declares the flags of `prune`.
func pruneFlags(fs *flag.FlagSet) options {
	o := &pruneOptions{}
	o.declare(fs, "output format: `text|json` (text: the body, then each archive after a '--- archive part i/n ---' line)",
		"the issue's live labels, comma-separated (`L1,L2`), for state.labels (default: the checkpoint's own)")
	fs.StringVar(&o.nowFlag, "now", "", "RFC 3339 `TIME` stamped on tail entries that lack one (default: now)")
	return o
}

func (o *pruneOptions) validate(fs *flag.FlagSet, pos []string, env Env) error {
	if err := o.validateOffline("prune", fs, pos, env); err != nil {
		return err
	}
	if o.nowFlag == "" {
		return nil
	}
	now, err := time.Parse(time.RFC3339, o.nowFlag)
	if err != nil {
		return usageError("prune: --now must be an RFC 3339 time such as 2026-05-16T13:20:00Z, not %q", o.nowFlag)
	}
	o.now = now
	return nil
}

// clock is the time stamped on tail entries that lack one: --now, else
// the clock's.
func (o *pruneOptions) clock(env Env) time.Time {
	if o.nowFlag == "" {
		return env.Now().UTC()
	}
	return o.now
}

// runPrune prints what pruning makes of a body, as the guard decides it
// offline (offline.Prune): the new body and the archive comments, or the
// body unchanged and a note of the triggers checked. It reads and writes no
// issue. A checkpoint that is not valid is never pruned: exit 1.
func runPrune(ctx context.Context, o *pruneOptions, env Env) error {
	in, cancel, err := o.input(ctx, env, o.clock(env))
	if err != nil {
		return err
	}
	defer cancel()
	rep := offline.Prune(in)
	if err := ctx.Err(); err != nil {
		return err
	}
	if !rep.Refused {
		fmt.Fprintln(env.Stderr, rep.Note())
	}
	switch {
	case o.format == "json":
		if err := printJSON(env, rep); err != nil {
			return err
		}
	case rep.Refused:
		fmt.Fprint(env.Stdout, rep.Text())
	default:
		printUntrusted(env, rep.Text())
	}
	if rep.Refused {
		fmt.Fprintln(env.Stderr, rep.Note())
		return errViolations
	}
	return nil
}
