// Package cli is the gns-guard command line: the verbs people and agents
// run (check, context, report, recover, history, status, prune, init,
// doctor, tokens, schema, rules, keygen, pubkey, version), the meter and
// the MCP server, and the dispatch to action mode inside Gitea Actions.
//
// A verb parses its flags, calls the packages that do the work, and
// prints. Main is the one place an outcome becomes an exit code (package
// exitcode). The command line reads the world only through Env, and it is
// where the Gitea adapter (package forge) is wired to the port.
package cli
