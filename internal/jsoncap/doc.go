// Package jsoncap reads JSON of untrusted size in bounded memory. Copy
// copies one JSON value, compacted, leaving out (as "") every string longer
// than a limit and noting where it was and how long; when its input stops
// short at a cap, it closes what was open, so that what was read before
// the cut still decodes.
//
// A server's answer or an event payload holds texts anyone with write
// access chose (an issue body, a comment); the guard needs their metadata
// and, of each text, at most the limit. Gitea writes <, > and & as
// \u003c, \u003e and \u0026 in its JSON: a text of n bytes can take 6n.
package jsoncap
