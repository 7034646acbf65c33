package status

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// CommentWrite is the status comment and the write making it.
type CommentWrite struct {
	// Body is the text; Do says a write is needed.
	Body  string
	Write guard.Write
	Do    bool
	// Moved says the comment is posted anew at the end of the issue and
	// the old one deleted: it had fallen so far back that the next run
	// might not reach it.
	Moved bool
}

// PlanWrite decides the status comment this run leaves. An unmoved state
// and unchanged comment reuse the record verbatim, so a clean pass writes
// nothing. Any write signs a fresh record stamped with the server's clock,
// so another's edit shows as an unexplained updated_at. existing is the
// comment found, if any.
func PlanWrite(in guard.Input, p *guard.Plan, existing *issues.Comment, a Applied, now time.Time) CommentWrite {
	cfg := in.Config
	moved := existing != nil && p.Ledger != nil && guard.StatusBuried(in.Recent, existing, a.Posted, in.Config.RecentWindow())
	if p.Ledger != nil && existing != nil && !moved {
		if old, _ := ledger.ReadOnce(in.Record, existing, in.Issue.Number, ledger.ConfigKeys(cfg)); old != nil &&
			old.SameState(*p.Ledger) && ledger.SignedWith(existing.Body, ledger.ConfigKeys(cfg)) {
			kept := a
			kept.Record, kept.Written = ledger.Line(existing.Body), time.Unix(old.Written, 0)
			if body := Stable(in, p, existing, kept); strings.TrimSpace(body) == strings.TrimSpace(existing.Body) {
				return CommentWrite{}
			}
		}
	}
	a.Written, a.Moved = now, moved
	if p.Ledger != nil {
		l := *p.Ledger
		l.Written = now.Unix()
		if !a.Read.IsZero() {
			l.Read = a.Read.Unix()
		}
		l.Seq++ // a new record
		a.Record = ledger.ConfigKeys(cfg).Encode(l)
	}
	body := Stable(in, p, existing, a)
	if moved {
		return CommentWrite{Body: body, Moved: true, Do: true,
			Write: guard.Write{Kind: guard.PostStatus, Detail: fmt.Sprintf(" anew at the end (comment %d had fallen out of reach)", existing.ID)}}
	}
	resolved := p.Resolved && p.Ledger == nil // the ledger needs a comment, clean or not
	w, ok := guard.StatusWrite(existing, body, resolved)
	return CommentWrite{Body: body, Write: w, Do: ok}
}

// Placeholder is the status comment a first run posts before its other
// writes: a ledger with no accepted state yet. A run cut short then leaves
// no guard trace without a ledger, which the next run would take for a
// deleted one. The run completes it last.
func Placeholder(in guard.Input, p *guard.Plan, now time.Time) string {
	n := in.Issue.Number
	l := ledger.Record{Issue: n, Writer: in.Self, Pending: []string{}, Written: now.Unix(), Config: in.ConfigStamp,
		Posture: in.Posture, ContentVersion: p.Opened}
	for _, a := range in.Config.Labels.Approval() {
		if slices.Contains(in.Issue.LabelNames(), a) {
			l.Pending = append(l.Pending, a)
		}
	}
	return issues.StatusMarker(n) + "\n## ⏳ gns-guard: at work\n\nThe guard is making this run's writes; it completes this comment, " +
		"which holds its ledger, last.\n" + ledger.ConfigKeys(in.Config).Encode(l) + "\n"
}

// NeedsPlaceholder: a run that writes without a status comment posts one
// first.
func NeedsPlaceholder(p *guard.Plan, existing *issues.Comment) bool {
	return p.Ledger != nil && existing == nil && len(p.Writes()) > 0
}
