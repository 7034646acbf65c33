package faulttest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
)

// The guard is killed after its archive comment was posted and before its
// body patch reached the server. The next run posts no second archive: it
// finds its own, with the same hash, and patches the body.
func TestKilledBetweenArchiveAndPatch(t *testing.T) {
	t.Parallel()
	f := actiontest.NewRepo(t)
	n, d := f.Open(t, "killed mid-prune", overlongTail(t), "cascade::depth-2", "size::medium")
	before := f.Issue(t, n)
	want := entries(mustDecode(t, before.Body).HistoryTail)

	p := newProxy(t, f.S.URL)
	held := p.inject(patchBody, faultBlock)
	proc := viaProxy(f, p).Start(t, d)
	select {
	case <-held.Blocked:
	case <-time.After(time.Minute):
		t.Fatalf("the guard never sent its body patch\nrequests:\n%s", strings.Join(p.Log(), "\n"))
	}
	archivePosted := fmt.Sprintf("POST /api/v1/repos/%s/%s/issues/%d/comments", f.Owner, f.Name, n)
	if !seen(p.Log(), archivePosted, "-> 201") {
		t.Fatalf("the body patch came without an archive posted first\nrequests:\n%s", strings.Join(p.Log(), "\n"))
	}
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	if r := proc.Wait(t); !proc.Killed() {
		t.Fatalf("the guard was not killed: exit %d\n%s", r.Code, r.Stdout)
	}
	p.off()

	orphan := archives(t, f, n)
	if len(orphan) != 1 {
		t.Fatalf("%d archive comments after the kill, want the 1 posted", len(orphan))
	}
	if got := f.Issue(t, n); got.Body != before.Body {
		t.Fatalf("the body changed although the patch never reached the server:\n%s", got.Body)
	}

	r := f.Step().Run(t, d)
	if r.Code != 0 || r.Outputs["pruned"] != "true" {
		t.Fatalf("the run after the kill: exit %d, pruned %q\n%s", r.Code, r.Outputs["pruned"], r.Stdout)
	}
	for _, w := range r.Writes {
		if strings.HasPrefix(w, "posted archive") {
			t.Errorf("the run after the kill posted an archive again: %s", w)
		}
	}
	var ids []int64
	actiontest.DecodeJSON(t, r, "archive-comment-ids", &ids)
	if !slices.Equal(ids, []int64{orphan[0].ID}) {
		t.Errorf("archive-comment-ids = %v, want the archive posted before the kill, [%d]", ids, orphan[0].ID)
	}
	if as := archives(t, f, n); len(as) != 1 || as[0].ID != orphan[0].ID {
		t.Errorf("archive comments after the re-run: %d, want only comment %d", len(as), orphan[0].ID)
	}
	sameHistory(t, history(t, f, n), want)
}

// Ten guards start at once on the same event of an issue due for a prune,
// and an agent edits the issue while they work: it appends a history entry
// and a line of text outside the checkpoint, with compare-and-swap (the
// guards' body patches are held until the edit is saved, so they all
// conflict with it). When all are done, exactly one archive of the pruned
// entries survives, the agent's edit is in the body, and the history is
// whole.
func TestTenGuardsAtOnceLoseNoEdit(t *testing.T) {
	t.Parallel()
	f := actiontest.NewRepo(t)
	for round := 1; round <= 3; round++ {
		t.Run(fmt.Sprintf("round-%d", round), func(t *testing.T) {
			n, d := f.Open(t, "ten guards at once", overlongTail(t), "cascade::depth-2", "size::medium")
			want := entries(mustDecode(t, f.Issue(t, n).Body).HistoryTail)

			p := newProxy(t, f.S.URL)
			gate := p.inject(patchBody, faultGate)
			step := viaProxy(f, p)
			procs := make([]*actiontest.Process, 10)
			for i := range procs {
				procs[i] = step.Start(t, d)
			}
			// The agent edits once the first archive is posted.
			deadline := time.Now().Add(time.Minute)
			archivePosted := fmt.Sprintf("POST /api/v1/repos/%s/%s/issues/%d/comments", f.Owner, f.Name, n)
			for !seen(p.Log(), archivePosted, "-> 201") {
				if time.Now().After(deadline) {
					t.Fatalf("no guard posted an archive within a minute\nrequests:\n%s", strings.Join(p.Log(), "\n"))
				}
				time.Sleep(5 * time.Millisecond)
			}
			note := fmt.Sprintf("Agent note, round %d: the load test must run again.", round)
			added := entry{Agent: "tester", Action: fmt.Sprintf("appended while the guards ran, round %d", round), Timestamp: "2026-05-16T15:00:00Z"}
			edit(t, f, n, func(body string, cp *doc) string {
				cp.HistoryTail = append(cp.HistoryTail, added)
				return body + "\n" + note + "\n"
			})
			want = append(want, added.prune())
			gate.open()

			codes := map[int]int{}
			for i, pr := range procs {
				r := pr.Wait(t)
				codes[r.Code]++
				if r.Code != 0 {
					t.Errorf("guard %d: exit %d\n%s", i+1, r.Code, r.Stdout)
				}
			}
			p.off()
			concurrent := archives(t, f, n)
			t.Logf("exit codes %v; %d archive comment(s) left by the ten guards; body patches: %d conflicts",
				codes, len(concurrent), count(p.Log(), regexp.MustCompile(`^PATCH /api/v1/repos/[^/]+/[^/]+/issues/\d+ -> 409`)))
			if len(concurrent) != 1 {
				t.Errorf("%d archive comments survive the ten guards, want exactly 1", len(concurrent))
			}

			// The agent's edit triggers a run of its own.
			r := f.Step().Run(t, editedBy(t, f, n))
			if r.Code != 0 {
				t.Fatalf("the run on the agent's edit: exit %d\n%s", r.Code, r.Stdout)
			}
			final := f.Issue(t, n).Body
			if !strings.Contains(final, note) {
				t.Errorf("the agent's note is lost:\n%s", final)
			}
			tail := mustDecode(t, final).HistoryTail
			if len(tail) == 0 || tail[len(tail)-1].prune() != added.prune() {
				t.Errorf("the agent's entry is not the last of history_tail: %+v", tail)
			}
			as := archives(t, f, n)
			if dups := duplicateArchives(as); len(dups) > 0 {
				t.Errorf("duplicate archives:\n%s", strings.Join(dups, "\n"))
			}
			sameHistory(t, history(t, f, n), want)
		})
	}
}

func count(log []string, re *regexp.Regexp) int {
	k := 0
	for _, l := range log {
		if re.MatchString(l) {
			k++
		}
	}
	return k
}
