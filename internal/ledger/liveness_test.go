package ledger

import (
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// A body ahead of the ledger is unjudged once its first unjudged edit is
// older than the grace: measured from that edit (or the ledger's writing),
// never from the issue's last activity, and a pending approval does not
// suspend it. Never within the grace, never when judged.
func TestBehind(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	l := &Record{Issue: 7, Baseline: true, ContentVersion: 3, Written: now.Add(-time.Hour).Unix(), Pending: []string{}}
	is := issues.Issue{Number: 7, ContentVersion: 4, UpdatedAt: now.Add(-time.Second)} // a comment a second ago
	u := BehindSince(l, is, now.Add(-5*time.Minute), now, 2*time.Minute)
	if u == nil || u.Judged != 3 || u.Current != 4 || u.For != 5*time.Minute || !u.Written.Equal(now.Add(-time.Hour)) {
		t.Fatalf("edited 5 minutes ago, grace 2m, talked to a second ago: %+v", u)
	}
	why := u.Why(7, 2*time.Minute)
	for _, want := range []string{"issue #7", "content version 4", "accepted version 3", "5m0s ago", "unjudged-grace 2m0s", "disabled", "ask an owner"} {
		if !strings.Contains(why, want) {
			t.Errorf("no %q in %q", want, why)
		}
	}
	pending := *l
	pending.Pending = []string{"permission::violation"}
	if u := Behind(&pending, is, now, 2*time.Minute); u == nil || u.For != time.Hour {
		t.Errorf("a pending approval suspended the check: %+v", u)
	}
	for name, c := range map[string]struct {
		l     *Record
		is    issues.Issue
		grace time.Duration
	}{
		"within the grace":    {l, is, 2 * time.Hour},
		"judged":              {l, issues.Issue{ContentVersion: 3, UpdatedAt: is.UpdatedAt}, time.Minute},
		"no ledger":           {nil, is, time.Minute},
		"no content versions": {l, issues.Issue{ContentVersion: 4, NoCAS: true, UpdatedAt: is.UpdatedAt}, time.Minute},
	} {
		if u := Behind(c.l, c.is, now, c.grace); u != nil {
			t.Errorf("%s: %+v", name, u)
		}
	}
	// No trusted record: unjudged once the issue is older than the grace.
	opened := issues.Issue{Number: 7, CreatedAt: now.Add(-10 * time.Minute)}
	if u := Unrecorded(opened, "the status comment is gone", now, 2*time.Minute); u == nil || !strings.Contains(u.Why(7, 2*time.Minute), "no trusted record of it: the status comment is gone") {
		t.Errorf("a missing record: %+v", u)
	}
	if u := Unrecorded(opened, "", now, time.Hour); u != nil {
		t.Errorf("a new issue within the grace: %+v", u)
	}
}
