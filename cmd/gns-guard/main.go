// Command gns-guard guards GNS-2 agent workflows kept in Gitea issues: a
// Gitea Actions step on issue, comment and label events, and a CLI.
package main

import (
	"context"
	"os"

	"github.com/gns-guard/gns-guard/internal/cli"
)

// main only wires: cli.Main runs the arguments (and turns SIGINT and
// SIGTERM into a cancelled run) and returns the exit code.
func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], cli.System()))
}
