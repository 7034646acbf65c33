// Package cli is the gns-guard command line: the verbs people and agents
// run (check, prune, history, tokens, schema, rules), and the dispatch to
// action mode inside Gitea Actions.
//
// Each verb is its flags plus a call into the packages that do the work;
// Main is the one place an outcome becomes an exit code (package exit). It
// reads the world only through Env. It is where the Gitea adapter (package
// forge) is wired to the port.
package cli
