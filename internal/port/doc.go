// Package port is what the shell needs of the server, in one place: each
// capability a named interface, with the data it takes and gives. The
// Gitea adapter (package forge) implements every one; tests use the one
// fake (internal/testkit/fakeforge).
//
// The roles, and who uses them:
//   - IssueReader: the live reader (package live), every run and verb.
//   - IssueWriter: the action's writes, report and recover.
//   - Permissions: approvals (is a user a repository admin?), the meter.
//   - Variables: the anchors, the grant list and the label pins.
//   - RepoLabels: the label pins, init.
//   - IssueLister, WorkflowReader: the dashboard.
//   - PostureReader, PostureAdmin: doctor and the action's posture.
//   - Setup, PostureSetup: init.
//   - Connection: what a client says of itself (its requests, the
//     secrets it refuses to send).
//
// Forge composes them all: one repository's client, as a connection
// gives it. Errors wrap the sentinels of package issues (ErrConflict,
// ErrForbidden, ErrNotFound, ...).
package port
