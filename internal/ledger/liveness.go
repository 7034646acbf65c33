package ledger

import (
	"fmt"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// Unjudged is a body the guard has not judged: its content_version is
// ahead of the one the guard's ledger accepted, for longer than the
// unjudged-grace setting (docs/contract.md#4b-the-trusted-ledger-its-anchor-and-approvals,
// "Liveness"). A guard whose workflow was disabled, or whose runs fail to
// start, leaves issues so: `context` and `report` refuse to build on them
// and `status` lists them.
type Unjudged struct {
	// Judged is the body's content_version the ledger accepted; Current
	// the body's now.
	Judged  int `json:"ledger_content_version"`
	Current int `json:"content_version"`
	// Since is the issue's last change (its updated_at): the unjudged edit
	// is at least as old. Written is when the guard wrote its ledger: the
	// edit is newer.
	Since   time.Time `json:"since"`
	Written time.Time `json:"ledger_written"`
	// For is how long the body has been ahead at least: now - Since.
	For time.Duration `json:"-"`
}

// Behind says whether the guard has not judged issue is's body: the
// body's content_version is ahead of the ledger's l, and the issue has not
// changed for longer than grace (the guard's run on an edit takes
// seconds; the grace covers a queued runner). The issue's updated_at is
// the only time the server gives of the edit, and any later activity
// moves it: the measure never refuses an edit younger than grace, and
// activity on the issue postpones it. now is the server's clock. nil when
// the body is judged, when there is no ledger (nothing to measure from),
// when the ledger waits for a person (pending approval labels: the guard
// judged and flagged the state), or on a server with no content versions.
func Behind(l *Record, is issues.Issue, now time.Time, grace time.Duration) *Unjudged {
	if l == nil || is.NoCAS || len(l.Pending) > 0 || is.ContentVersion <= l.ContentVersion || is.UpdatedAt.IsZero() {
		return nil
	}
	u := &Unjudged{Judged: l.ContentVersion, Current: is.ContentVersion, Since: is.UpdatedAt.UTC(), For: now.Sub(is.UpdatedAt)}
	if l.Written > 0 {
		u.Written = time.Unix(l.Written, 0).UTC()
	}
	if u.For <= grace {
		return nil
	}
	return u
}

// Why says, for the person or agent who reads it, what changed, since
// when, and what to do.
func (u *Unjudged) Why(n int64, grace time.Duration) string {
	written := ""
	if !u.Written.IsZero() {
		written = ", written " + u.Written.Format(time.RFC3339)
	}
	return fmt.Sprintf("issue #%d: the guard has not judged its body: the body is at content version %d, its ledger accepted version %d%s; the issue has not changed since %s (%s ago, over unjudged-grace %s), yet no guard run recorded the change. The guard's workflow may be disabled or its runs failing: ask an owner of the repository to check its Actions (gns-guard status lists the issues and a disabled guard workflow); do not build on this state until the guard has judged it",
		n, u.Current, u.Judged, written, u.Since.Format(time.RFC3339), u.For.Round(time.Second), grace)
}
