// Package markdown makes untrusted text safe inside the Markdown comments
// the guard writes. It imports nothing of the project's.
package markdown
