package action

import (
	"fmt"
	"slices"

	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/status"
)

// dryRun plans every write and makes none; it only reads.
func (r *runner) dryRun(in guard.Input, s *live.Snapshot, p *guard.Plan) applied {
	res := applied{notes: slices.Clone(r.notes)}
	if s.Status != nil {
		res.statusID = s.Status.ID
	}
	if s.Issue.NoCAS && !s.Issue.BodyTooLarge {
		res.notes = append(res.notes, noCAS)
	}
	for _, w := range p.Writes() {
		res.writes = append(res.writes, w.Planned())
	}
	done := status.Applied{Notes: res.notes, Pruned: p.Prune != nil, Filled: p.Fill != nil, Hinted: p.Hint != nil, Locked: p.Lock != ""}
	if st := status.PlanWrite(in, p, s.Status, done, r.serverTime()); st.Do {
		res.writes = append(res.writes, st.Write.Planned())
		if in.Anchor.Writable {
			res.writes = append(res.writes, "write the anchor "+ledger.AnchorName(in.Issue.Number))
		}
	}
	if len(p.Grants) > 0 && in.Anchor.Writable {
		res.writes = append(res.writes, fmt.Sprintf("write the grant list %s (%s granted to issue #%d)", ledger.GrantsName,
			grantedTokens(p.Grants), in.Issue.Number))
	}
	return res
}
