package action_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// The read hint (docs/ledger.md#the-read-hint) is a line of the body any
// issue writer can edit. These tests edit it as an agent would, and check
// that the guard's verdict is the timeline's: no comment hidden, the same
// findings, at a bounded cost.

// hintOf is the read hint line of a body ("" when it has none).
func hintOf(body string) string { return strings.TrimSpace(hintLine.FindString(body)) }

// setHint is body with its read hint set to the time text at.
func setHint(t *testing.T, body, at string) string {
	t.Helper()
	h := hintOf(body)
	if h == "" {
		t.Fatalf("the body has no read hint:\n%s", body)
	}
	return strings.Replace(body, h, "# gns-guard: comments since "+at, 1)
}

// verdict is what a run found: its violations and warnings, by rule, key
// path and message.
func verdict(t *testing.T, r actiontest.Result) []string {
	t.Helper()
	var ws []actiontest.Violation
	actiontest.DecodeJSON(t, r, "warnings", &ws)
	var out []string
	for _, v := range append(r.Violations(t), ws...) {
		out = append(out, v.Rule+" "+v.KeyPath+": "+v.Message)
	}
	slices.Sort(out)
	return out
}

// throughHint says the run read the comments through the read hint.
func throughHint(r actiontest.Result) bool {
	return strings.Contains(r.Stdout, "through the read hint")
}

// TestReadHintEditedByAnAgent: an agent posts three long notes that put
// the next agent's entry load over the pressure gate, then edits the read
// hint to hide them: to a time in the future, to the epoch, away, garbled
// or doubled. Every run fails for pressure exactly as the run that reads
// the timeline does, and costs at most one request more than it.
func TestReadHintEditedByAnAgent(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	inputs := []string{"ledger-key", ledgerKey}
	n, d := f.Open(t, t.Name(), func(n int64) string {
		return checkpointBody(n, "cascade::depth-2, size::small", shortTail, 1000)
	}, "cascade::depth-2", "size::small")
	f.Run(t, d, inputs...).Expect(t, 0, "pass")
	honest := f.Issue(t, n).Body
	if hintOf(honest) == "" {
		t.Fatalf("the first run wrote no read hint:\n%s", honest)
	}
	fakeLabelNoise(t, f, n, 120) // the status comment beyond the timeline's tail
	var dc actiontest.Delivery
	for i := 1; i <= 3; i++ {
		_, dc = f.Comment(t, n, agent, progressNote(t, fmt.Sprintf("step %d", i), 1300))
	}
	variants := []struct{ name, body string }{
		{"removed", withoutHint(honest)}, // what the timeline finds
		{"in the future", setHint(t, honest, "2099-01-01T00:00:00Z")},
		{"at the epoch", setHint(t, honest, "1970-01-01T00:00:00Z")},
		{"garbled", setHint(t, honest, "yesterday")},
		{"doubled, the later first", strings.Replace(honest, hintOf(honest), "# gns-guard: comments since 2099-01-01T00:00:00Z\n"+hintOf(honest), 1)},
		{"honest", honest},
	}
	var reference []string
	var timeline int
	for i, v := range variants {
		f.EditBody(t, n, agent, v.body)
		r := f.Run(t, dc, append(inputs, "dry-run", "true")...)
		r.Expect(t, 1, "fail")
		got := verdict(t, r)
		t.Logf("hint %s: %d requests, through the hint %v", v.name, r.Requests, throughHint(r))
		if i == 0 {
			if throughHint(r) || !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "context-pressure ") }) {
				t.Fatalf("without a hint the run did not read the timeline, or found no pressure: %v\n%s", got, r)
			}
			reference, timeline = got, r.Requests
			continue
		}
		if !slices.Equal(got, reference) {
			t.Errorf("hint %s: the verdict differs from the timeline's:\n%s\nwant\n%s", v.name, strings.Join(got, "\n"), strings.Join(reference, "\n"))
		}
		if r.Requests > timeline+1 {
			t.Errorf("hint %s: %d requests, more than the timeline's %d and one", v.name, r.Requests, timeline)
		}
		if v.name == "honest" && (!throughHint(r) || r.Requests >= timeline) {
			t.Errorf("the honest hint: %d requests, through the hint %v; want fewer than the timeline's %d, through it", r.Requests, throughHint(r), timeline)
		}
	}
}

// window is the comments the read hint must prove: max(3, digest-after
// + 2), digest-after being 5.
const window = 7

// honestHint is the hint report writes on issue n: the creation of its
// window-th newest comment, never after the status comment's last update.
func honestHint(t *testing.T, f *fakeFixture, n int64) time.Time {
	t.Helper()
	cs := f.S.Comments(n)
	at := cs[len(cs)-window].CreatedAt
	for _, c := range cs {
		if c.Author == f.Bot && strings.Contains(c.Body, actiontest.StatusMarker(n)) && c.UpdatedAt.Before(at) {
			at = c.UpdatedAt
		}
	}
	return at.UTC()
}

// TestReadHintAfterCommentsDeletedOrEdited: after an honest hint, an older
// comment edited into a long one is judged as the timeline judges it (it
// is not among the last three: still a pass, through the hint); five of
// the last comments deleted leave too few after the hint's time, so the
// run reads the timeline, passes as it does, and writes a fresh hint: the
// next clean pass costs two requests again.
func TestReadHintAfterCommentsDeletedOrEdited(t *testing.T) {
	f := newFakeFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	inputs := []string{"ledger-key", ledgerKey}
	n, d := f.Open(t, t.Name(), example(t, "healthy.md"), governed...)
	f.Run(t, d, inputs...).Expect(t, 0, "pass")
	var ids []int64
	var dc actiontest.Delivery
	for i := 1; i <= window+2; i++ {
		var id int64
		id, dc = f.Comment(t, n, agent, fmt.Sprintf("note %d: the limiter reads its buckets from the store", i))
		ids = append(ids, id)
	}
	f.Run(t, dc, inputs...).Expect(t, 0, "pass")
	at := honestHint(t, f, n)
	de := f.EditBody(t, n, agent, setHint(t, f.Issue(t, n).Body, at.Format(time.RFC3339)))
	f.Run(t, de, inputs...).Expect(t, 0, "pass")
	fakeLabelNoise(t, f, n, 120)
	r := f.Run(t, de, inputs...)
	r.Expect(t, 0, "pass")
	if r.Requests != 2 || len(r.Writes) != 0 || !throughHint(r) {
		t.Fatalf("a clean pass after an honest hint: %d requests, writes %q\n%s", r.Requests, r.Writes, r)
	}

	// An older comment, not among the last three, edited into a long one.
	f.EditComment(t, n, ids[0], agent, progressNote(t, "an edit after the hint", 1500))
	r = f.Run(t, de, append(inputs, "dry-run", "true")...)
	r.Expect(t, 0, "pass")
	if !throughHint(r) || r.Requests != 2 {
		t.Errorf("after an older comment's edit: %d requests, through the hint %v", r.Requests, throughHint(r))
	}
	got := verdict(t, r)
	body := f.Issue(t, n).Body
	f.EditBody(t, n, f.Admin(), withoutHint(body))
	ref := f.Run(t, de, append(inputs, "dry-run", "true")...)
	ref.Expect(t, 0, "pass")
	if want := verdict(t, ref); throughHint(ref) || !slices.Equal(got, want) {
		t.Errorf("the verdict through the hint:\n%s\nthe timeline's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	f.Run(t, f.EditBody(t, n, f.Admin(), body), inputs...).Expect(t, 0, "pass")

	// Five of the last comments deleted: too few after the hint's time.
	for _, id := range ids[4:] {
		f.DeleteComment(t, id, agent)
	}
	r = f.Run(t, de, inputs...)
	r.Expect(t, 0, "pass")
	if throughHint(r) || !slices.ContainsFunc(r.Writes, func(w string) bool { return strings.HasPrefix(w, "wrote the read hint") }) {
		t.Errorf("after the deletions: through the hint %v, writes %q; want the timeline and a fresh hint\n%s", throughHint(r), r.Writes, r)
	}
	r = f.Run(t, de, inputs...)
	r.Expect(t, 0, "pass")
	if r.Requests != 2 || len(r.Writes) != 0 || !throughHint(r) {
		t.Errorf("the clean pass after the fresh hint: %d requests, writes %q", r.Requests, r.Writes)
	}
}
