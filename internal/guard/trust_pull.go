package guard

import (
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// A pull request keeps a record too (docs/ledger.md#pull-requests): every
// label on it by id, and the permission::evolve-system label it accepted.
// Without one, an approver's ordinary label renamed to
// permission::evolve-system would show on the timeline as the approver's
// addition of it.

// judgePull reads the pull request's record and judges its labels by id:
// renamed labels keep the names they were recorded with, and
// permission::evolve-system counts when the record accepted that very
// label, or an approver added it since.
func (e *decision) judgePull() {
	e.readRecord()
	live := e.acceptedNames()
	e.labels = issues.NamesOf(live)
	evolve := e.cfg.Labels.EvolveSystem
	i := slices.IndexFunc(live, func(l issues.Label) bool { return l.Name == evolve })
	if i < 0 || e.trust.problem != "" {
		return
	}
	accepted, _ := e.trust.accepted()
	if live[i].ID != 0 && slices.Contains(accepted, live[i]) {
		e.trust.evolveOK = true
		return
	}
	e.trust.evolveBy = e.actorOf(live[i], true)
	e.trust.evolveOK = e.isApprover(e.trust.evolveBy)
}

// recordPull records labels by id under recorded names; evolve-system only
// when it counts.
func (e *decision) recordPull() {
	t := &e.trust
	after := e.labelsAfter()
	l := ledger.Record{Issue: e.in.Issue.Number}
	if t.ledger != nil {
		l = *t.ledger
	}
	l.Pending = e.pendingAfter(after)
	l.Writer, l.Config, l.Posture, l.Repo = e.in.Self, e.in.ConfigStamp, e.in.Posture, e.in.Issue.RepoID
	l.Labels = slices.DeleteFunc(e.labelsByID(after), func(x issues.Label) bool {
		return x.Name == e.cfg.Labels.EvolveSystem && !t.evolveOK
	})
	for i, x := range l.Labels {
		for _, r := range t.renamed {
			if x.ID == r.id {
				l.Labels[i].Name = r.from
			}
		}
	}
	slices.SortFunc(l.Labels, func(a, b issues.Label) int { return strings.Compare(a.Name, b.Name) })
	e.anchorFloor(&l)
	e.plan.Ledger = &l
}
