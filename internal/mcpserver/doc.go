// Package mcpserver serves command-line verbs as the tools of a Model
// Context Protocol server over standard input and output (the official Go
// SDK), for agents that call tools instead of running commands.
//
// A tool is a verb: its input schema is made from the verb's own flags and
// the settings table (package settings), and a call runs the verb's
// command line through the caller's Runner with --format json, so a tool
// and the verb give the same answer on the same state. The package knows
// nothing of the verbs themselves: package cli hands it the verb table's
// flag sets and a Runner that calls its Main.
//
// Standard output carries the protocol and nothing else; the log goes to
// Options.Log, scrubbed of Options.Secrets as every result is.
package mcpserver
