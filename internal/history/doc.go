// Package history rebuilds an issue's full history from its archive
// comments and the checkpoint's tail, as `history` prints it, and proves
// it: the archive chain against the guard's ledger record, and with
// Verify every signature under the published public keys.
//
//   - rebuild.go: Rebuild, the entries in order, with the notes and the
//     problems (an archive edited, deleted or reordered, a chain that
//     cannot be proven).
//   - verify.go: Verify, the report of `history --verify`: what verified,
//     signed by which keys, and each problem naming its comment.
//
// It reads the issue as package live read it and writes nothing.
package history
