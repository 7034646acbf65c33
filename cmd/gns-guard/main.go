// Command gns-guard guards GNS-2 agent workflows kept in Gitea issues: a
// Gitea Actions step on issue, comment and label events, and a CLI.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/gns-guard/gns-guard/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.System())
	stop()
	os.Exit(code)
}
