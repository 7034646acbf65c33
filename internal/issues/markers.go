package issues

import "fmt"

// Hidden markers of the comments the guard writes. They are trusted only on
// comments the guard's own user wrote (the decision checks the author).
const (
	markerStatus   = "<!-- gns-guard:status issue=%d -->"
	markerRecovery = "<!-- gns-guard:recovery issue=%d -->"
	markerDigest   = "<!-- gns-guard:digest issue=%d -->"
	markerArchive  = "<!-- gns-guard:archive issue=%d "
)

// StatusMarker hides in the sticky status comment.
func StatusMarker(issue int64) string { return fmt.Sprintf(markerStatus, issue) }

// RecoveryMarker is the hidden marker of a context-recovery request.
func RecoveryMarker(issue int64) string { return fmt.Sprintf(markerRecovery, issue) }

// DigestMarker is the hidden marker of a completion digest.
func DigestMarker(issue int64) string { return fmt.Sprintf(markerDigest, issue) }

// ArchiveMarkerPrefix starts the hidden marker of every archive comment.
func ArchiveMarkerPrefix(issue int64) string { return fmt.Sprintf(markerArchive, issue) }
