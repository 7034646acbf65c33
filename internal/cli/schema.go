package cli

import (
	"context"
	"flag"

	"github.com/gns-guard/gns-guard/internal/offline"
)

// schemaOptions are the parsed flags of `schema`.
type schemaOptions struct {
	tail   int
	format string
}

// schemaFlags declares the flags of `schema`.
func schemaFlags(fs *flag.FlagSet) options {
	o := &schemaOptions{}
	fs.IntVar(&o.tail, "history-tail", offline.DefaultTailLimit, "the history-tail setting (`N`): history_tail may hold twice as many entries")
	fs.StringVar(&o.format, "format", "json", "output format: `json|text` (the schema is JSON; text is the same)")
	return o
}

func (o *schemaOptions) validate(_ *flag.FlagSet, pos []string, _ Env) error {
	if err := noArgs("schema", pos); err != nil {
		return err
	}
	if err := checkFormat("schema", o.format); err != nil {
		return err
	}
	if o.tail < 1 {
		return usageError("schema: --history-tail must be positive")
	}
	return nil
}

// runSchema prints the JSON Schema of the checkpoint (version 2).
func runSchema(_ context.Context, o *schemaOptions, env Env) error {
	_, err := env.Stdout.Write(offline.Schema(o.tail))
	return err
}
