// Package posture judges whether a repository's permissions and settings
// let the guard's guarantees hold (docs/contract.md#4b-the-trusted-ledger,
// the threat model): the facts read from Gitea go in (facts.go: teams and
// their per-unit modes, collaborators, the workflows of the default branch,
// its protection, the secrets' names, the published public key), a list of
// checks comes out (judge.go), each saying whether it holds, why, and the
// logins that break it. It reads nothing itself: `gns-guard doctor` and the
// action read the facts (through package port) and print the checks.
package posture
