package cli

import "github.com/gns-guard/gns-guard/internal/checkpoint"

func runSchema(args []string, env Env) error {
	fs := newFlags("schema", env, "schema [--history-tail N]")
	tail := fs.Int("history-tail", checkpoint.DefaultTailLimit, "most entries history_tail may hold")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("schema takes no arguments")
	}
	if *tail < 1 {
		return usageError("schema: --history-tail must be positive")
	}
	_, err = env.Stdout.Write(checkpoint.JSONSchema(*tail))
	return err
}
