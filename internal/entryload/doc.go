// Package entryload assembles what a GNS-2 agent loads on entry — the
// checkpoint, the last comments, at most three files and one skill — under
// a hard token cap with priority truncation.
//
// It is a pure core: sections, a token counter and a cap in, the assembled
// load out. It reads no file, makes no request and reads no clock. The
// printed load never exceeds the cap, measured as the exact token count of
// the text itself; the checkpoint is never cut.
package entryload
