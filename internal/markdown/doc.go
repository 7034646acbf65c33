// Package markdown is the one home of untrusted text: what the guard does
// to text read from an issue before it shows it anywhere. Quote and
// OneLine put it in a message or a heading; Cell and URL in a table of a
// comment the guard writes; Fence in a code block no text can close;
// Strip takes out what Gitea's renderer does not show a person (HTML
// comments, invisible characters and the like) before a model reads it.
// Its invariants are held in markdown_test.go. It imports nothing of the
// project's.
package markdown
