// Command gns-guard guards GNS-2 agent workflows kept in Gitea issues: a
// Gitea Actions step on issue, comment and label events; a command line
// for people and agents; an MCP server (gns-guard mcp); and the meter
// that counts every model call against the budget (gns-guard
// meter).
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
