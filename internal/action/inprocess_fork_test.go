package action_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/prune"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
)

// forkedArchives leaves issue n (prunable) as runs that prune at once
// leave it for a moment: one run archived the history, lost its body
// write to an agent's report, and has not withdrawn its archive yet;
// another archived the history after the report, wrote the body and has
// not written its ledger yet. Two of the guard's archives continue the
// history from the same place; the loser's is returned.
func forkedArchives(t *testing.T, r *fakeRepo, n int64) issues.Comment {
	t.Helper()
	had := len(guardArchives(t, r, n))
	r.S.Inject(fakeforge.Fault{Method: "EditBody", Status: 409})
	r.run(t, edited(n, agent), "ledger-key", ledgerKey).expect(t, exitcode.CannotRun, "error")
	r.S.Heal()
	lost := guardArchives(t, r, n)[had:]
	if len(lost) != 1 {
		t.Fatalf("the run that lost its body write left %d archives, want 1", len(lost))
	}
	r.tick(time.Minute)
	r.editBody(t, n, agent, func(body string) string {
		i := strings.Index(body, "  current_task:")
		return body[:i] + "    - {agent: tester, action: ran the load tests (round 7), timestamp: \"2026-05-16T12:40:00Z\"}\n" + body[i:]
	})
	r.tick(time.Minute)
	r.S.Inject(fakeforge.Fault{Method: "EditComment", Status: 500})
	r.run(t, edited(n, agent), "ledger-key", ledgerKey).expect(t, exitcode.CannotRun, "error")
	r.S.Heal()
	won := guardArchives(t, r, n)[had:]
	if len(won) != 1 || won[0].Body == lost[0].Body {
		t.Fatalf("the run that wrote the body left %d archives (the same as the loser's: %v), want 1 of its own", len(won), len(won) == 1 && won[0].Body == lost[0].Body)
	}
	loser := r.S.AddComment(n, issues.Comment{Author: issues.ActionsUser, Body: lost[0].Body})
	r.tick(time.Minute)
	return loser
}

// guardArchives are the guard's archive comments on issue n.
func guardArchives(t *testing.T, r *fakeRepo, n int64) []issues.Comment {
	t.Helper()
	var out []issues.Comment
	for _, c := range r.S.Comments(n) {
		if c.Author == issues.ActionsUser && strings.Contains(c.Body, fmt.Sprintf("%sissue=%d ", prune.MarkerPrefix, n)) {
			out = append(out, c)
		}
	}
	return out
}

// entriesAccepted is what issue n's ledger accepted: history entries in
// all, and of them archived.
func entriesAccepted(t *testing.T, r *fakeRepo, n int64) (entries, archived int) {
	t.Helper()
	for _, c := range r.S.Comments(n) {
		if strings.Contains(c.Body, issues.StatusMarker(n)) {
			l, problem := ledger.Read(&c, n, ledger.SecretKeys([]byte(ledgerKey)))
			if l == nil {
				t.Fatalf("the status comment holds no ledger: %s", problem)
			}
			return l.Entries, l.Archived
		}
	}
	t.Fatal("no status comment")
	return 0, 0
}

// A run that finds two of the guard's archives continuing the history
// from the same place reads the issue again: the loser's archive is
// withdrawn meanwhile, and the run accepts the history with what was
// archived. Recording the body's entries alone would make the next run
// call the history tampered with (more archived than accepted).
func TestInProcessForkedArchivesAreReadAgain(t *testing.T) {
	r := newFakeRepo(t)
	n := prunable(t, r)
	loser := forkedArchives(t, r, n)
	reads := 0
	r.S.Inject(fakeforge.Fault{Method: "Issue", Times: 2, Before: func() {
		if reads++; reads == 2 {
			r.S.RemoveComment(loser.ID) // the loser withdraws
		}
	}})
	res := r.run(t, edited(n, agent), "ledger-key", ledgerKey)
	res.expect(t, exitcode.Clean, "pass")
	if !strings.Contains(res.stdout, "continue the history differently") || !strings.Contains(res.stdout, "reading it again (attempt 2 of") {
		t.Errorf("the run did not read again on the fork:\n%s", res)
	}
	entries, archived := entriesAccepted(t, r, n)
	if archived == 0 || entries <= archived {
		t.Errorf("the ledger accepted %d entries, %d of them archived: the archived ones are not counted", entries, archived)
	}
	r.tick(time.Minute)
	r.run(t, edited(n, agent), "ledger-key", ledgerKey).expect(t, exitcode.Clean, "pass")
}

// A fork nobody withdraws (the losing run was cut short) is a warning
// that names both archives: the run keeps the state accepted last, does
// not prune, and calls nothing tampered with; once one is deleted, the
// next run accepts the history whole.
func TestInProcessForkLeftBehindKeepsTheLastState(t *testing.T) {
	r := newFakeRepo(t)
	n := prunable(t, r)
	beforeEntries, beforeArchived := entriesAccepted(t, r, n)
	loser := forkedArchives(t, r, n)
	res := r.run(t, edited(n, agent), "ledger-key", ledgerKey)
	res.expect(t, exitcode.Clean, "pass")
	if !strings.Contains(res.stdout, fmt.Sprintf("comment %d", loser.ID)) || !strings.Contains(res.stdout, "continue the history from the same place") {
		t.Errorf("the warning does not name the loser's archive %d:\n%s", loser.ID, res)
	}
	if e, a := entriesAccepted(t, r, n); e != beforeEntries || a != beforeArchived {
		t.Errorf("the ledger moved on at a fork: %d entries (%d archived), it accepted %d (%d) before", e, a, beforeEntries, beforeArchived)
	}
	r.S.RemoveComment(loser.ID)
	r.tick(time.Minute)
	r.run(t, edited(n, agent), "ledger-key", ledgerKey).expect(t, exitcode.Clean, "pass")
	if e, a := entriesAccepted(t, r, n); a == 0 || e <= a {
		t.Errorf("after the fork the ledger accepted %d entries, %d archived", e, a)
	}
}

// A run reads the body, then the comments. When a concurrent run's prune
// lands in between, that run's archive holds entries the body read still
// has, and looks like a stale archive of a run that never wrote its body.
// The run reads the body again before deleting a stale archive: it finds
// the change, reads the issue again, and the concurrent run's archive,
// and the entries it holds, stay.
func TestInProcessArchiveOfAPruneThatLandedMeanwhileIsNotStale(t *testing.T) {
	r := newFakeRepo(t)
	n := prunable(t, r)
	had := len(guardArchives(t, r, n))
	r.S.Inject(fakeforge.Fault{Method: "EditBody", Status: 409})
	r.run(t, edited(n, agent), "ledger-key", ledgerKey).expect(t, exitcode.CannotRun, "error")
	r.S.Heal()
	r.tick(time.Minute)
	var landed []issues.Comment
	started := false
	meanwhile := func() {
		if started {
			return
		}
		started = true
		// Between this run's read of the body and of its comments an
		// agent reports, and another run prunes and writes the body; its
		// status comment is not written yet.
		r.editBody(t, n, agent, func(body string) string {
			i := strings.Index(body, "  current_task:")
			return body[:i] + "    - {agent: tester, action: ran the load tests (round 7), timestamp: \"2026-05-16T12:40:00Z\"}\n" + body[i:]
		})
		r.S.Inject(fakeforge.Fault{Method: "EditComment", Status: 500})
		r.run(t, edited(n, agent), "ledger-key", ledgerKey).expect(t, exitcode.CannotRun, "error")
		r.S.Heal()
		landed = guardArchives(t, r, n)[had:]
	}
	// The comments are read through the body's read hint, or from the
	// timeline.
	r.S.Inject(fakeforge.Fault{Method: "CommentsSince", Times: 1, Before: meanwhile})
	r.S.Inject(fakeforge.Fault{Method: "RecentComments", Times: 1, Before: meanwhile})
	res := r.run(t, edited(n, agent), "ledger-key", ledgerKey)
	res.expect(t, exitcode.Clean, "pass")
	if len(landed) != 1 {
		t.Fatalf("the concurrent prune left %d archives, want 1", len(landed))
	}
	if !slices.ContainsFunc(guardArchives(t, r, n), func(c issues.Comment) bool { return c.ID == landed[0].ID }) {
		t.Errorf("the archive of the prune that landed meanwhile (comment %d) was deleted as stale:\n%s", landed[0].ID, res)
	}
	r.tick(time.Minute)
	r.run(t, edited(n, agent), "ledger-key", ledgerKey).expect(t, exitcode.Clean, "pass")
}
