// Package faulttest owns the real-Gitea tests of what goes wrong around
// the guard's writes: faults injected on every kind of write through a
// proxy in front of the server, a guard killed between its archive comment
// and its body patch, ten guards at once on one issue while an agent edits
// it, the 1,000-step agent workflow whose history must be rebuilt entry for
// entry, and archive comments as Gitea's own Markdown renderer shows them.
// It must not import internal/action (action mode runs through
// internal/testkit/actiontest, as the binary or in-process) nor internal/testkit/e2e, and
// it takes from the guard's own packages only what a user or an agent also
// has: the archive reader of internal/prune that `gns-guard history` uses,
// and the checkpoint finder and token counter an agent loading the issue
// would use. What is right is read from the server.
//
// The tests run the gns-guard binary built as the Dockerfile builds it, or
// action mode in-process where a test needs hundreds of runs or a client
// timeout shorter than the binary's; both are the same code, fed the event
// payloads of the runs the server records (actiontest.Runs). The long
// workflow shows the server every fifth step (each edit holds the steps of
// its round) and has the steps between judged by `gns-guard check`, the
// guard's decision without the server. Nothing of Gitea is faked. They
// need GNS_GUARD_INTEGRATION=1 (or CI set); see internal/testkit/giteatest.
package faulttest
