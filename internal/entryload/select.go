package entryload

import (
	"strings"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// SelectComments picks the comments a load holds from an issue's recent
// comments (oldest first): the newest n that are not the guard's own. A
// comment is the guard's when guardUser wrote it and it carries one of the
// guard's hidden markers for the issue (status, archive, digest,
// recovery); a marker in anyone else's comment proves nothing, and that
// comment is loaded like any other. It returns the chosen comments, oldest
// first, and the guard's comments passed over while looking, newest first.
func SelectComments(recent []Comment, guardUser string, issue int64, n int) (chosen []Comment, skipped []Skipped) {
	for i := len(recent) - 1; i >= 0 && len(chosen) < n; i-- {
		c := recent[i]
		if what := guardComment(c, guardUser, issue); what != "" {
			skipped = append(skipped, Skipped{ID: c.ID, What: what})
			continue
		}
		chosen = append(chosen, c)
	}
	for i, j := 0, len(chosen)-1; i < j; i, j = i+1, j-1 {
		chosen[i], chosen[j] = chosen[j], chosen[i]
	}
	return chosen, skipped
}

// guardComment says which of the guard's comments c is, or "".
func guardComment(c Comment, guardUser string, issue int64) string {
	if guardUser == "" || c.Author != guardUser {
		return ""
	}
	for _, m := range []struct{ what, marker string }{
		{"status", issues.StatusMarker(issue)},
		{"archive", issues.ArchiveMarkerPrefix(issue)},
		{"digest", issues.DigestMarker(issue)},
		{"recovery", issues.RecoveryMarker(issue)},
	} {
		if strings.Contains(c.Body, m.marker) {
			return m.what
		}
	}
	return ""
}
