package main

import (
	"context"
	"os"

	"github.com/gns-guard/gns-guard/internal/action"
	"github.com/gns-guard/gns-guard/internal/cli"
	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/port"
)

// main wires action mode and the meter in; cli.Main cancels on SIGINT or SIGTERM and
// returns the exit code.
func main() {
	env := cli.System()
	env.Action = runAction
	env.Meter = serveMeter
	os.Exit(cli.Main(context.Background(), os.Args[1:], env))
}

// serveMeter serves the meter; nil in a build without it.
var serveMeter func(context.Context, cli.MeterStart) error

// runAction runs action mode with the Gitea adapter.
func runAction(ctx context.Context, env cli.Env) error {
	return action.Run(ctx, action.Options{
		Getenv:     env.Getenv,
		Stdout:     env.Stdout,
		Stderr:     env.Stderr,
		ReadFile:   env.ReadFile,
		AppendFile: env.AppendFile,
		NewForge: func(apiURL, token, owner, repo string) (port.Forge, error) {
			return forge.New(apiURL, token, owner, repo)
		},
		Now: env.Now,
	})
}
