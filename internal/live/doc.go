// Package live is the one reader of a live issue, for the action and every
// verb: the issue, its last comments, the status comment and its ledger,
// the guard's login and the configuration file, so every verb judges as
// the guard would. It decides nothing. Verbs reach the server through it:
// URL, token, held secrets, the reader (Open).
package live
