// Package actiontest owns how the tests run the guard's step: the gns-guard
// binary built as the Dockerfile builds it (or action mode in-process, the
// same code), the environment a runner gives the step, the event payloads
// of the workflow runs the real server records (Runs: what a runner hands
// the step, which is not what a webhook delivers), and the one repository
// fixture (Repo) with its issue, comment, edit, label, marker and
// expectation helpers that every action-mode test package shares. It must
// not import any test package (internal/action's tests, internal/testkit/faulttest,
// internal/testkit/e2e), nor the guard's decision code (internal/guard's rules,
// internal/prune, internal/checkpoint, internal/tokens) to work out what a
// test expects: expectations come from the server, the binary, or the
// tests' own reading. It imports internal/action, internal/cli,
// internal/forge and internal/guard only to run action mode in-process, as
// the binary's main does.
//
// The real-Gitea helpers need the package's shared server
// (giteatest.Require): a test package using them calls giteatest.Main in
// its TestMain.
package actiontest
