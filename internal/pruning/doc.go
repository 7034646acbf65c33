// Package pruning holds the real-Gitea tests of pruning (SPEC section 5):
// a long agent workflow whose history is archived step after step and
// rebuilt entry for entry at the end; faults injected on every kind of
// write through a proxy in front of the server, and a guard killed between
// its archive and its body patch; ten guards running at once on one issue
// while an agent edits it; and archive comments as Gitea's own Markdown
// renderer shows them.
//
// The tests run the gns-guard binary built as the Dockerfile builds it, or
// action mode in-process where a test needs hundreds of runs or a client
// timeout shorter than the binary's; both are the same code. Nothing of
// Gitea is faked. They need GNS_GUARD_INTEGRATION=1 (or CI set); see
// internal/giteatest.
package pruning
