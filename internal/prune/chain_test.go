package prune

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

var testKey = newTestKeys("the ledger key")

// chained is an issue pruned three times, each archive chained to the one
// before and signed with key: its comments (ids from 10, parts in order),
// the chain the ledger records after the last, and the full history.
type chained struct {
	cs    []Comment
	chain Chain
	want  []Entry
	tail  []Entry
	plans []*Result
}

func threePrunes(t *testing.T, key *testKeys) chained {
	t.Helper()
	rng := rand.New(rand.NewPCG(31, 32))
	cfg := DefaultConfig()
	cfg.MaxCommentChars = 3000
	cfg.Signer = signer(key)
	var c chained
	var current []Entry
	id := int64(10)
	for round := range 3 {
		es := randEntries(rng, 20)
		for i := range es {
			if es[i].Timestamp == "" {
				es[i].Timestamp = "2026-04-04T04:04:04Z"
			}
		}
		current = append(current, es...)
		body := spec{Total: 1000, Consumed: 900, Entries: current, Tail: round > 0}.body(t)
		res, err := Plan(body, parse(t, body), 0, nil, testNow, cfg)
		if err != nil {
			t.Fatal(err)
		}
		c.plans = append(c.plans, res)
		c.want = append(c.want, res.Archived...)
		c.cs = append(c.cs, comments(res.Archives, "bot", id)...)
		id += int64(len(res.Archives)) + 5
		cfg.Prev, cfg.Count = res.Head, res.Count
		current = slices.Clone(res.Kept)
	}
	c.tail = current
	c.want = append(c.want, current...)
	c.chain = Chain{Head: cfg.Prev, Count: cfg.Count, Known: true, Keys: verifier(key)}
	if len(c.cs) < 5 || len(c.plans[0].Archives) < 2 {
		t.Fatalf("want several parts, got %d", len(c.cs))
	}
	return c
}

func TestChainProves(t *testing.T) {
	for _, key := range []*testKeys{nil, testKey} {
		c := threePrunes(t, key)
		// A copy of a part re-posted by the guard's user, one by someone
		// else, and noise do not count.
		cs := append(slices.Clone(c.cs), Comment{ID: 500, Author: "bot", Body: c.cs[2].Body}, Comment{ID: 501, Author: "eve", Body: c.cs[0].Body}, Comment{ID: 502, Author: "bot", Body: "hello"})
		got, problems := Rebuild(cs, "bot", testIssue, c.tail, &c.chain)
		if len(problems) > 0 {
			t.Fatalf("key %q: problems %v", key, problems)
		}
		if !slices.Equal(Entries(got), c.want) {
			t.Fatalf("key %q: rebuilt %d entries, want %d", key, len(got), len(c.want))
		}
		// Every part is signed as said and links to the one before.
		prev := Genesis
		for _, cm := range c.cs {
			a, err := ParseArchive(cm.Body)
			if err != nil {
				t.Fatal(err)
			}
			if a.Prev != prev || !a.Verified(verifier(key)) || (key == nil) != (a.Sig == Unsigned) {
				t.Fatalf("comment %d: prev %.8s (want %.8s), sig %.8s", cm.ID, a.Prev, prev, a.Sig)
			}
			prev = a.Link()
		}
		if prev != c.chain.Head {
			t.Fatal("the last part's link is not the head the plan reports")
		}
	}
}

// hasProblem fails unless one problem names comment id (0: any) and says
// every word.
func hasProblem(t *testing.T, problems []Problem, id int64, says ...string) {
	t.Helper()
	for _, p := range problems {
		if (id == 0 || p.Comment == id) && !p.Note && func() bool {
			for _, s := range says {
				if !strings.Contains(p.Message, s) {
					return false
				}
			}
			return true
		}() {
			return
		}
	}
	t.Errorf("no problem on comment %d saying %q: %v", id, says, problems)
}

// dropEntry edits an archive comment as an attacker without the key can:
// one entry dropped, sha256, count and sig recomputed so the comment is
// self-consistent.
func dropEntry(t *testing.T, body string) string {
	t.Helper()
	a, err := ParseArchive(body)
	if err != nil {
		t.Fatal(err)
	}
	p := *a
	p.Entries = slices.Delete(slices.Clone(a.Entries), 0, 1)
	p.SHA256 = Hash(a.Issue, a.Phase, a.Budget, p.Entries)
	p.Count--
	p.Kid, p.Sig = "", Unsigned
	var rows []string
	var js []json.RawMessage
	for i, e := range p.Entries {
		rows = append(rows, row(p.FirstSeq+i, e, cellLimits))
		b, _ := json.Marshal(e)
		js = append(js, b)
	}
	return archive{issue: a.Issue, phase: a.Phase, budget: a.Budget, sha: p.SHA256}.part(&p, len(p.Entries), rows, js)
}

func TestChainEdited(t *testing.T) {
	for _, key := range []*testKeys{nil, testKey} {
		c := threePrunes(t, key)
		cs := slices.Clone(c.cs)
		victim := cs[3]
		cs[3].Body = dropEntry(t, victim.Body)
		if _, err := ParseArchive(cs[3].Body); err != nil {
			t.Fatalf("the edited comment should parse: %v", err)
		}
		got, problems := Rebuild(cs, "bot", testIssue, c.tail, &c.chain)
		if key != nil {
			hasProblem(t, problems, victim.ID, "signature does not verify")
		} else {
			hasProblem(t, problems, victim.ID, "not on the chain")
		}
		hasProblem(t, problems, cs[4].ID, "before this one", "missing")
		if len(got) == len(c.want) {
			t.Errorf("key %q: the edited history rebuilt whole", key)
		}
	}
}

func TestChainDeleted(t *testing.T) {
	c := threePrunes(t, nil)
	// A part in the middle.
	cs := slices.Delete(slices.Clone(c.cs), 3, 4)
	_, problems := Rebuild(cs, "bot", testIssue, c.tail, &c.chain)
	hasProblem(t, problems, c.cs[4].ID, "before this one", "missing", "deleted")
	// A whole archive (every part of the second prune).
	n1, n2 := len(c.plans[0].Archives), len(c.plans[1].Archives)
	cs = slices.Delete(slices.Clone(c.cs), n1, n1+n2)
	_, problems = Rebuild(cs, "bot", testIssue, c.tail, &c.chain)
	hasProblem(t, problems, c.cs[n1+n2].ID, "missing")
	// The last part: the ledger's head is gone.
	cs = c.cs[:len(c.cs)-1]
	_, problems = Rebuild(cs, "bot", testIssue, c.tail, &c.chain)
	hasProblem(t, problems, 0, "last archive part the ledger records", "missing")
	// With no ledger record the end cannot be proven: a problem too.
	noLedger := c.chain
	noLedger.Known, noLedger.Head, noLedger.Count = false, "", 0
	_, problems = Rebuild(c.cs, "bot", testIssue, c.tail, &noLedger)
	hasProblem(t, problems, 0, "no trusted ledger record")
}

func TestChainReordered(t *testing.T) {
	c := threePrunes(t, testKey)
	cs := slices.Clone(c.cs)
	// Two archives' comments swapped by edits: every part still verifies.
	n1 := len(c.plans[0].Archives)
	cs[0].Body, cs[n1].Body = cs[n1].Body, cs[0].Body
	got, problems := Rebuild(cs, "bot", testIssue, c.tail, &c.chain)
	hasProblem(t, problems, cs[0].ID, "reordered")
	if !slices.Equal(Entries(got), c.want) {
		t.Error("the chain still orders the entries as archived")
	}
}

// A run that posted its archive and died before recording it: the chain
// is followed past the ledger's head. An impostor claiming the same place
// is not.
func TestChainExtendAndImpostor(t *testing.T) {
	c := threePrunes(t, testKey)
	last := c.plans[2]
	behind := Chain{Head: c.plans[1].Head, Count: c.plans[1].Count, Known: true, Keys: testKey}
	got, problems := Rebuild(c.cs, "bot", testIssue, c.tail, &behind)
	if len(problems) > 0 || !slices.Equal(Entries(got), c.want) {
		t.Fatalf("extension: %v", problems)
	}
	head, count, followed, _ := Extend(behind.Head, behind.Count, parts(t, c.cs), testKey, nil)
	if head != last.Head || count != last.Count || len(followed) != len(last.Archives) {
		t.Errorf("Extend: %d parts followed", len(followed))
	}
	// Parts whose entries are still in the body are not followed.
	_, _, followed, _ = Extend(behind.Head, behind.Count, parts(t, c.cs), testKey, func(*Archive) bool { return true })
	if len(followed) != 0 {
		t.Error("held parts followed")
	}

	// An impostor of the first part of the last archive (same prev, one
	// entry dropped, unsigned), posted earlier as the guard's user.
	first := len(c.cs) - len(last.Archives)
	fake := Comment{ID: 1, Author: "bot", Body: dropEntry(t, c.cs[first].Body)}
	cs := append([]Comment{fake}, c.cs...)
	got, problems = Rebuild(cs, "bot", testIssue, c.tail, &c.chain)
	hasProblem(t, problems, 1, "signature does not verify")
	if !slices.Equal(Entries(got), c.want) {
		t.Error("the impostor changed the history")
	}
	noKey := c.chain
	noKey.Keys = nil
	_, problems = Rebuild(cs, "bot", testIssue, c.tail, &noKey)
	hasProblem(t, problems, 1, "not on the chain")
}

func TestChainLegacy(t *testing.T) {
	c := threePrunes(t, nil)
	// An archive written before chaining: read first, with a note.
	old := c.plans[0].Archives[0]
	a, _ := ParseArchive(old)
	a.Format = legacyFormat
	legacy := strings.Replace(old, `"gns_archive":2`, `"gns_archive":1`, 1)
	legacy = replaceLast(legacy, Marker(c.plans[0].Parts[0]), Marker(a))
	if p, err := ParseArchive(legacy); err != nil || p.Format != legacyFormat {
		t.Fatalf("legacy: %v", err)
	}
	cs := []Comment{{ID: 1, Author: "bot", Body: legacy}}
	_, problems := Rebuild(cs, "bot", testIssue, nil, &Chain{Known: true})
	if len(problems) == 0 || !problems[0].Note || !strings.Contains(problems[0].Message, "before archive parts were chained") {
		t.Errorf("problems %v", problems)
	}
}

func parts(t *testing.T, cs []Comment) []Part {
	t.Helper()
	var out []Part
	for _, c := range cs {
		a, err := ParseArchive(c.Body)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Part{ID: c.ID, Archive: a})
	}
	return out
}
