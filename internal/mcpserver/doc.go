// Package mcpserver serves the command-line verbs as tools of a Model
// Context Protocol server on stdio. A tool's schema comes from the verb's
// flags, and a call runs the verb with --format json, so both answer alike.
// Package cli hands it the flag sets and a Runner. Stdout carries the
// protocol only; the log is scrubbed of secrets.
package mcpserver
