// Package issues holds the issue as the guard reads it, and what reads it:
// the issue, its comments, labels and label events (issue.go), the event
// that triggered a run (event.go), the task sizes (tasksize.go), the
// hidden markers of the guard's own comments (markers.go), how much of a
// text the guard reads (limits.go), and the errors a client of the server
// wraps (forge.go; the client's roles are package port's).
//
// It holds data and the few pure functions that read it; it decides
// nothing (package guard does). The guard's configuration is package
// config's.
package issues
