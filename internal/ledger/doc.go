// Package ledger is the guard's trusted record as data and cryptography:
// the Record and its signed line in the status comment, the Keys derived
// from ledger-key, the Anchor in a repository variable, the HistoryHash
// chain, and the BurnPoint series. It encodes and verifies; whether to
// trust a record is package guard's decision. It is pure.
package ledger
