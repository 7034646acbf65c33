package cli

import "github.com/gns-guard/gns-guard/internal/checkpoint"

// runSchema prints the JSON Schema of the checkpoint (version 2).
func runSchema(args []string, env Env) error {
	fs := newFlags("schema", env, "schema [--history-tail N] [--format json]")
	tail := fs.Int("history-tail", checkpoint.DefaultTailLimit, "most entries history_tail may hold")
	format := fs.String("format", "json", "output format: json (the schema is JSON; text is the same)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("schema takes no arguments")
	}
	if err := checkFormat("schema", *format); err != nil {
		return err
	}
	if *tail < 1 {
		return usageError("schema: --history-tail must be positive")
	}
	_, err = env.Stdout.Write(checkpoint.JSONSchema(*tail))
	return err
}
