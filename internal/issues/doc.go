// Package issues holds the issue as the guard reads it: its comments,
// labels and events (issue.go, event.go), who may speak (authors.go), task
// sizes, the guard's hidden markers, how much of a text is read
// (limits.go), and the errors a client wraps (forge.go). It decides
// nothing.
package issues
