package ledger

import (
	"fmt"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// Unjudged is a change the guard has not judged for longer than
// unjudged-grace (docs/contract.md#4b-the-trusted-ledger): a body ahead of
// the accepted content_version, or a status comment or record missing or
// unverified. A disabled or failing guard leaves issues so; `context` and
// `report` refuse them. The grace runs from the change, so comments and
// approvals do not extend it.
type Unjudged struct {
	// Judged is accepted content_version (-1: no trusted record); Current is
	// now's.
	Judged  int `json:"ledger_content_version"`
	Current int `json:"content_version"`
	// Since is when the unjudged change was made, as closely as the
	// reader knows it and never later: the body's first edit after the
	// ledger (its edit history), else the ledger's writing; for a missing
	// record, the issue's opening. Written is when the guard wrote its
	// ledger.
	Since   time.Time `json:"since"`
	Written time.Time `json:"ledger_written"`
	// Problem says why no record is trusted ("" when one is).
	Problem string `json:"problem,omitempty"`
	// For is now - Since, at least.
	For time.Duration `json:"-"`
}

// Behind says whether the guard has not judged issue is's body, measured
// from the ledger's writing: the edit is newer, so the measure never
// refuses later than it should (BehindSince with the edit's own time is
// closer). nil when the body is judged, within the grace, or on a server
// with no content versions.
func Behind(l *Record, is issues.Issue, now time.Time, grace time.Duration) *Unjudged {
	if l == nil {
		return nil
	}
	return BehindSince(l, is, time.Unix(l.Written, 0), now, grace)
}

// BehindSince is Behind with the time the first unjudged edit was made
// (since; zero: the ledger's writing, else the issue's last change, for a
// record that does not say when it was written). A pending approval does
// not suspend it: the guard judges a state it flagged again on every run.
func BehindSince(l *Record, is issues.Issue, since, now time.Time, grace time.Duration) *Unjudged {
	if l == nil || is.NoCAS || is.ContentVersion <= l.ContentVersion {
		return nil
	}
	switch {
	case since.IsZero() && l.Written > 0:
		since = time.Unix(l.Written, 0)
	case since.IsZero() || since.Unix() == 0:
		since = is.UpdatedAt
	}
	u := &Unjudged{Judged: l.ContentVersion, Current: is.ContentVersion, Since: since.UTC(), For: now.Sub(since)}
	if l.Written > 0 {
		u.Written = time.Unix(l.Written, 0).UTC()
	}
	if u.For <= grace {
		return nil
	}
	return u
}

// Unrecorded is a governed (or anchored) issue with no trusted record:
// its status comment or record is missing (deleted, say) or does not
// verify (problem says which). The guard's first run records one within
// seconds of the issue's opening, so the grace runs from the opening.
func Unrecorded(is issues.Issue, problem string, now time.Time, grace time.Duration) *Unjudged {
	since := is.CreatedAt
	if since.IsZero() {
		since = is.UpdatedAt
	}
	u := &Unjudged{Judged: -1, Current: is.ContentVersion, Since: since.UTC(), Problem: problem, For: now.Sub(since)}
	if u.For <= grace {
		return nil
	}
	return u
}

// Why says what changed, since when, and what to do.
func (u *Unjudged) Why(n int64, grace time.Duration) string {
	what := fmt.Sprintf("the guard has not judged its body: the body is at content version %d, its ledger accepted version %d", u.Current, u.Judged)
	if !u.Written.IsZero() {
		what += ", written " + u.Written.Format(time.RFC3339)
	}
	what += fmt.Sprintf("; the first change it has not judged was made at %s", u.Since.Format(time.RFC3339))
	if u.Problem != "" {
		what = fmt.Sprintf("the guard holds no trusted record of it: %s; the issue was opened at %s", u.Problem, u.Since.Format(time.RFC3339))
	}
	return fmt.Sprintf("issue #%d: %s (%s ago, over unjudged-grace %s), yet no guard run judged it. The guard's workflow may be "+
		"disabled or its runs failing, or its status comment was deleted: ask an owner of the repository to check its Actions "+
		"(gns-guard status lists the issues and a disabled guard workflow); do not build on this state until the guard has judged it",
		n, what, u.For.Round(time.Second), grace)
}
