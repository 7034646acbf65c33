// Package flagdoc reads what a command-line flag says of itself: the name
// of its value (back-quoted in its usage, as the flag package has it), the
// words it takes, whether it repeats. The verbs' help, synopses and usage
// lines, the MCP tools' schemas and the wording of a flag mistake are made
// from it, so a flag is declared once.
package flagdoc
