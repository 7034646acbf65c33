package guard

import (
	"github.com/gns-guard/gns-guard/internal/agentcomment"
	"github.com/gns-guard/gns-guard/internal/issues"
)

// planDigest posts after digest-after results since the last digest or
// archive, counting only authorised authors.
func (e *decision) planDigest() {
	if e.cfg.DigestAfter <= 0 {
		return
	}
	issue := e.in.Issue.Number
	var results []agentcomment.Result
	for _, c := range e.in.Recent {
		if e.own(c, issues.DigestMarker(issue)) || e.own(c, issues.ArchiveMarkerPrefix(issue)) {
			results = results[:0]
			continue
		}
		if r, ok := agentcomment.ResultOf(c.ID, c.HTMLURL, c.Body); ok && e.speaks(c) {
			results = append(results, r)
		}
	}
	if len(results) < e.cfg.DigestAfter {
		return
	}
	e.plan.Digest = agentcomment.Digest(issue, results) + "\n" + issues.DigestMarker(issue) + "\n"
}
