// Package entryload assembles what a GNS-2 agent loads on entry (the
// checkpoint, the last comments, up to three files and one skill) under a
// hard token cap. The cap is measured on the printed text itself, and the
// checkpoint is never cut. It is pure.
package entryload
