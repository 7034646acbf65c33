// Package cli is the gns-guard command line: the verbs people and agents
// run, the meter's and the MCP server's verbs, and the dispatch to action
// mode inside Gitea Actions.
//
// A verb parses its flags, calls the package that does the work, and
// prints. Main is the one place an outcome becomes an exit code. The
// world comes in through Env; the binary wires action mode and the meter.
package cli
