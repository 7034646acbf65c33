// Package markdown makes untrusted text safe inside the Markdown comments
// the guard writes.
package markdown
