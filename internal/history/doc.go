// Package history rebuilds an issue's full history from its archive
// comments and the checkpoint's tail, as `history` prints it.
//
// Verify proves it: the archive chain against the guard's ledger, and
// every signature under the published keys. It writes nothing.
package history
