// Package secrets finds the tokens and keys a process holds in a text it
// is about to write: as they are, and encoded as a log or a model would
// encode them (base64, hex, URL escapes). Nothing the guard or a verb
// writes may carry one (docs/contract.md#4b-the-trusted-ledger).
package secrets
