// Package ledger is the guard's trusted record of an issue as data and
// cryptography: the record (Record) and its hidden line in the status
// comment, signed and verified with Ed25519 keys derived from ledger-key
// (Keys, which also sign archive parts); the anchor that seals the newest
// record in a repository variable (Anchor); the hash that chains every
// accepted history entry (HistoryHash); and the burn series the record
// keeps for the charts (BurnPoint).
//
// It encodes, decodes and verifies; it judges nothing: whether a record
// is trusted against the live issue, and what the next record holds, is
// package guard's decision. It is pure.
package ledger
