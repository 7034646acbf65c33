// Package markdown is the one home of untrusted text. Quote and OneLine put
// it in a message or heading; Cell and URL in a table; Fence in a code
// block no text can close; Strip takes out what Gitea does not show before
// a model reads it. Plural writes a count with its noun. markdown_test.go
// holds its invariants.
package markdown
