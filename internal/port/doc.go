// Package port names each capability the shell needs of the server. forge
// implements all; tests use internal/testkit/fakeforge.
//
//   - IssueReader (every run), IssueWriter (action, report, recover).
//   - Permissions (approvals, the meter), Variables, RepoLabels.
//   - IssueLister, WorkflowReader (the dashboard).
//   - PostureReader, PostureAdmin (doctor), Setup, PostureSetup (init).
//   - Connection: a client's requests and refused secrets.
//
// Forge composes them. Errors wrap package issues' sentinels.
package port
