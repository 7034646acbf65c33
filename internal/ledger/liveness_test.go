package ledger

import (
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// A body ahead of the ledger is unjudged once the issue has been quiet for
// longer than the grace; never within it, never when the guard flagged the
// state (approval labels pending), never without a ledger.
func TestBehind(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	l := &Record{Issue: 7, Baseline: true, ContentVersion: 3, Written: now.Add(-time.Hour).Unix(), Pending: []string{}}
	is := issues.Issue{Number: 7, ContentVersion: 4, UpdatedAt: now.Add(-5 * time.Minute)}
	u := Behind(l, is, now, 2*time.Minute)
	if u == nil || u.Judged != 3 || u.Current != 4 || u.For != 5*time.Minute || !u.Written.Equal(now.Add(-time.Hour)) {
		t.Fatalf("5 minutes ahead, grace 2m: %+v", u)
	}
	why := u.Why(7, 2*time.Minute)
	for _, want := range []string{"issue #7", "content version 4", "accepted version 3", "5m0s ago", "unjudged-grace 2m0s", "disabled", "ask an owner"} {
		if !strings.Contains(why, want) {
			t.Errorf("no %q in %q", want, why)
		}
	}
	for name, c := range map[string]struct {
		l     *Record
		is    issues.Issue
		grace time.Duration
	}{
		"within the grace":    {l, is, 10 * time.Minute},
		"judged":              {l, issues.Issue{ContentVersion: 3, UpdatedAt: is.UpdatedAt}, time.Minute},
		"no ledger":           {nil, is, time.Minute},
		"waits for a person":  {&Record{ContentVersion: 3, Pending: []string{"permission::violation"}}, is, time.Minute},
		"no content versions": {l, issues.Issue{ContentVersion: 4, NoCAS: true, UpdatedAt: is.UpdatedAt}, time.Minute},
	} {
		if u := Behind(c.l, c.is, now, c.grace); u != nil {
			t.Errorf("%s: %+v", name, u)
		}
	}
}
