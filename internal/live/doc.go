// Package live is the one reader of a live issue. The action and every
// CLI verb that works on an issue read it here, the same way: the issue,
// its last comments (and a pull request's files), the guard's status
// comment with its ledger, the guard's own login, the repository's
// configuration file; they answer the questions the decision asks of the
// server (whether a user is a repository admin) with one loop, and say
// why a request failed with one classifier. So `report`, `context`,
// `recover` and `history` judge exactly as the guard's run would on the
// same issue with the same configuration.
//
// It reads through the port's roles (package port; the adapter is
// injected, as in action mode) and decides nothing a pure function could:
// decisions are package guard's.
package live
