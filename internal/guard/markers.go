package guard

import (
	"fmt"
	"strings"
)

// Hidden markers of the comments the guard writes. They are trusted only on
// comments the guard's own user wrote.
const (
	markerStatus   = "<!-- gns-guard:status issue=%d -->"
	markerRecovery = "<!-- gns-guard:recovery issue=%d -->"
	markerDigest   = "<!-- gns-guard:digest issue=%d -->"
	markerArchive  = "<!-- gns-guard:archive issue=%d "
)

// StatusMarker is the hidden marker of an issue's sticky status comment.
func StatusMarker(issue int64) string { return fmt.Sprintf(markerStatus, issue) }

// RecoveryMarker is the hidden marker of a context-recovery request.
func RecoveryMarker(issue int64) string { return fmt.Sprintf(markerRecovery, issue) }

// DigestMarker is the hidden marker of a completion digest.
func DigestMarker(issue int64) string { return fmt.Sprintf(markerDigest, issue) }

// ArchiveMarkerPrefix starts the hidden marker of every archive comment.
func ArchiveMarkerPrefix(issue int64) string { return fmt.Sprintf(markerArchive, issue) }

// own reports whether c is the guard's and carries marker.
func (e *eval) own(c Comment, marker string) bool {
	return c.Author == e.in.Self && e.in.Self != "" && strings.Contains(c.Body, marker)
}
