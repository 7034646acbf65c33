package prune

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLossless(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 1, 2, 3, 4, 5, 10, 50, 200, 500}
	for range 40 {
		sizes = append(sizes, rng.IntN(501))
	}
	for _, n := range sizes {
		for _, tail := range []bool{false, true} {
			orig := randEntries(rng, n)
			if tail {
				for i := range orig {
					if orig[i].Timestamp == "" {
						orig[i].Timestamp = "2026-02-02T00:00:00Z"
					}
				}
			}
			s := spec{Total: 10000, Consumed: 9000, Entries: orig, Tail: tail, CRLF: rng.IntN(4) == 0, Bare: rng.IntN(8) == 0}
			body := s.body(t)
			cfg := DefaultConfig()
			cfg.TailLimit = 1 + rng.IntN(5)
			if rng.IntN(3) == 0 {
				cfg.MaxCommentChars = minCommentChars + rng.IntN(8000)
			}
			res, err := Plan(body, parse(t, body), 0, []string{"z", "a"}, testNow, cfg)
			if err != nil {
				t.Fatalf("n=%d tail=%v: %v", n, tail, err)
			}
			if want := max(0, n-cfg.TailLimit); res.Removed != want || len(res.Archived) != want {
				t.Fatalf("n=%d: removed %d, want %d", n, res.Removed, want)
			}
			if (res.Removed == 0) != (len(res.Archives) == 0) || (res.Removed == 0) != (res.SHA256 == "") {
				t.Fatalf("n=%d: removed %d but %d archives, sha %q", n, res.Removed, len(res.Archives), res.SHA256)
			}
			checkLossless(t, res, expected(orig, cfg.TailLimit, !tail || n == 0, testNow), cfg.maxChars())
		}
	}
}

func TestSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	orig := make([]Entry, 1200)
	for i := range orig {
		orig[i] = Entry{
			Agent:      "agent-" + strings.Repeat("x", i%7),
			Action:     randText(rng, 30) + strings.Repeat(" long words", 8),
			Invocation: "inv-" + strings.Repeat("9", i%5),
			Timestamp:  "2026-03-01T10:00:00Z",
		}
	}
	body := spec{Total: 100, Consumed: 90, Entries: orig}.body(t)
	res, err := Plan(body, parse(t, body), testIssue, nil, testNow, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Archives) < 3 {
		t.Fatalf("%d parts; the test wants 3 or more", len(res.Archives))
	}
	var parts []*Archive
	total := 0
	for i, a := range res.Archives {
		if n := runes(a); n > DefaultMaxCommentChars {
			t.Errorf("part %d: %d characters", i+1, n)
		}
		p, err := ParseArchive(a)
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		if p.Part != i+1 || p.Parts != len(res.Archives) || p.SHA256 != res.SHA256 || p.FirstSeq != total+1 {
			t.Errorf("part %d: %+v", i+1, p)
		}
		if !strings.HasPrefix(a, Heading+"\n") || !strings.HasSuffix(a, Marker(res.Parts[i])+"\n") {
			t.Errorf("part %d: heading or marker misplaced", i+1)
		}
		total += len(p.Entries)
		parts = append(parts, p)
	}
	if total != len(orig)-3 {
		t.Errorf("parts hold %d entries, want %d", total, len(orig)-3)
	}
	// Parts in any order verify; a missing or doubled part does not.
	shuffled := slices.Clone(parts)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if err := Verify(shuffled); err != nil {
		t.Errorf("Verify: %v", err)
	}
	if err := Verify(parts[1:]); err == nil || !strings.Contains(err.Error(), "part(s) 1 of") {
		t.Errorf("Verify without part 1: %v", err)
	}
	if err := Verify(append(slices.Clone(parts), parts[0])); err == nil {
		t.Errorf("Verify with part 1 twice passed")
	}
	checkLossless(t, res, expected(orig, 3, true, testNow), DefaultMaxCommentChars)
	bytes := 0
	for _, a := range res.Archives {
		bytes += len(a)
	}
	t.Logf("1,197 entries of ~%d characters: %d parts, %d bytes of archive, body %d → %d bytes",
		len(orig[0].Action), len(res.Archives), bytes, res.OldBytes, res.NewBytes)
}

// TestSizes reports archive sizes for a typical history (run with -v).
func TestSizes(t *testing.T) {
	for _, n := range []int{100, 1000} {
		orig := make([]Entry, n)
		for i := range orig {
			orig[i] = Entry{Agent: "lead-developer", Action: "implemented the middleware, wrote tests and updated the docs",
				Invocation: "inv-20260516-1320-a7", Timestamp: "2026-05-16T13:20:00Z"}
		}
		body := spec{Total: 100, Consumed: 90, Entries: orig}.body(t)
		res, err := Plan(body, parse(t, body), testIssue, nil, testNow, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		bytes := 0
		for _, a := range res.Archives {
			bytes += len(a)
		}
		t.Logf("%d entries: %d part(s), %d bytes of archive; body %d → %d bytes", n, len(res.Archives), bytes, res.OldBytes, res.NewBytes)
	}
}

func TestHugeEntry(t *testing.T) {
	// An entry whose table row cannot fit is shortened in the table only.
	big := Entry{Agent: "a", Action: strings.Repeat("<", 9000), Timestamp: "2026-03-01T10:00:00Z"}
	orig := []Entry{{Agent: "a", Action: "b"}, big, {Agent: "c", Action: "d"}, {Agent: "e", Action: "f"}, {Agent: "g", Action: "h"}}
	body := spec{Total: 10, Entries: orig}.body(t)
	cfg := DefaultConfig()
	cfg.MaxCommentChars = 56000 // the JSON of the big entry is 54,000 characters
	res, err := Plan(body, parse(t, body), 0, nil, testNow, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Archives) != 2 {
		t.Fatalf("%d parts, want 2", len(res.Archives))
	}
	if !strings.Contains(res.Archives[1], "| 2 | a | "+strings.Repeat("&lt;", 79)+"…") {
		t.Errorf("the big entry's row is not shortened:\n%.600s", res.Archives[1])
	}
	checkLossless(t, res, expected(orig, 3, true, testNow), cfg.MaxCommentChars)

	// One whose JSON alone cannot fit is an error naming it.
	cfg.MaxCommentChars = 50000
	_, err = Plan(body, parse(t, body), 0, nil, testNow, cfg)
	if err == nil || !strings.Contains(err.Error(), "history entry 2 (line ") {
		t.Errorf("err = %v", err)
	}
}

func TestHashDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	orig := randEntries(rng, 40)
	body := spec{Total: 1000, Consumed: 900, Entries: orig}.body(t)
	a, err := Plan(body, parse(t, body), 0, []string{"x"}, testNow, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Plan(body, parse(t, body), 0, []string{"y", "x"}, testNow.Add(48*time.Hour), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if a.SHA256 != b.SHA256 || !slices.Equal(a.Archives, b.Archives) {
		t.Errorf("the archive depends on the clock or labels: %s vs %s", a.SHA256, b.SHA256)
	}
	if len(a.SHA256) != 64 || strings.Trim(a.SHA256, "0123456789abcdef") != "" {
		t.Errorf("sha256 = %q", a.SHA256)
	}
	// Another budget, phase or entry: another hash.
	for _, other := range []string{
		spec{Total: 1000, Consumed: 901, Entries: orig}.body(t),
		spec{Total: 1000, Consumed: 900, Entries: orig, Phase: "review"}.body(t),
		spec{Total: 1000, Consumed: 900, Entries: append(slices.Clone(orig[:10]), orig[11:]...)}.body(t),
	} {
		c, err := Plan(other, parse(t, other), 0, nil, testNow, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		if c.SHA256 == a.SHA256 {
			t.Errorf("a different archive has the same hash")
		}
	}
	if h := Hash(1, "p", Snapshot{}, nil); h != Hash(1, "p", Snapshot{}, []Entry{}) {
		t.Errorf("nil and empty entries hash differently")
	}
}

func TestBudget(t *testing.T) {
	tests := []struct {
		name             string
		total, consumed  int64
		ratio            float64
		grant            int64
		want             int64
		wantErr, noReset bool
	}{
		{name: "half", total: 20000, consumed: 17001, ratio: 0.5, want: 1499},
		{name: "grant", total: 20000, consumed: 17001, ratio: 0.5, grant: 5000, want: 6499},
		{name: "negative remaining", total: 100, consumed: 150, ratio: 0.5, want: 0},
		{name: "negative remaining with grant", total: 100, consumed: 150, ratio: 0.5, grant: 700, want: 700},
		{name: "decimal ratio", total: 10, consumed: 0, ratio: 0.3, want: 3},
		{name: "ratio 0", total: 10, consumed: 0, ratio: 0, grant: 1, want: 1},
		{name: "ratio 1", total: math.MaxInt64, consumed: 0, ratio: 1, want: math.MaxInt64},
		{name: "huge exact", total: math.MaxInt64, consumed: 0, ratio: 0.5, want: math.MaxInt64 / 2},
		{name: "overflow", total: math.MaxInt64, consumed: 0, ratio: 1, grant: 1, wantErr: true},
		{name: "bad ratio", total: 10, ratio: 1.5, wantErr: true},
		{name: "NaN ratio", total: 10, ratio: math.NaN(), wantErr: true},
		{name: "negative grant", total: 10, ratio: 0.5, grant: -1, wantErr: true},
		{name: "no reset", total: 100, consumed: 90, ratio: 0.5, noReset: true, want: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := spec{Total: tt.total, Consumed: tt.consumed, Entries: []Entry{{Agent: "a", Action: "b", Timestamp: "2026-01-01T00:00:00Z"}}, Tail: true}.body(t)
			cfg := DefaultConfig()
			cfg.CarryoverRatio, cfg.PhaseGrant, cfg.ResetBudget = tt.ratio, tt.grant, !tt.noReset
			res, err := Plan(body, parse(t, body), 0, nil, testNow, cfg)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("no error; budget %+v", res.NewBudget)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := Budget{tt.want, 0, tt.want}
			if tt.noReset {
				want = Budget{tt.total, tt.consumed, tt.total - tt.consumed}
			}
			if res.NewBudget != want {
				t.Errorf("new budget %+v, want %+v", res.NewBudget, want)
			}
			after := parse(t, res.Body).Checkpoint.Budget
			if after.Total.Value != want.Total || after.Consumed.Value != want.Consumed || after.Remaining.Value != want.Remaining {
				t.Errorf("body budget %+v", after)
			}
		})
	}
}

func TestGrowth(t *testing.T) {
	// One short entry without a timestamp: history_tail needs one, so the
	// body grows, and nothing is archived.
	body := "```yaml\ncheckpoint:\n  version: 2\n  issue: 42\n  phase: p\n  depth: 0\n  last_agent: a\n  last_invocation: i\n" +
		"  budget: {total: 100, consumed: 90, remaining: 10}\n  state: {labels: [a], assignee: a}\n" +
		"  history: [{agent: a, action: b}]\n  next_agent: b\n  next_estimated_tokens: 0\n  created_at: 2026-01-01T00:00:00Z\n```\n"
	res, err := Plan(body, parse(t, body), 0, []string{"a"}, testNow, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Grew || res.NewBytes < res.OldBytes || res.Removed != 0 || len(res.Archives) != 0 {
		t.Errorf("grew=%v %d → %d, removed %d", res.Grew, res.OldBytes, res.NewBytes, res.Removed)
	}
	// A long history shrinks.
	body = spec{Total: 100, Consumed: 90, Entries: randEntries(rand.New(rand.NewPCG(7, 8)), 30)}.body(t)
	res, err = Plan(body, parse(t, body), 0, nil, testNow, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if res.Grew || res.NewBytes >= res.OldBytes {
		t.Errorf("grew=%v %d → %d", res.Grew, res.OldBytes, res.NewBytes)
	}
}

func TestReplanIdempotent(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	body := spec{Total: 1000, Consumed: 900, Entries: randEntries(rng, 25)}.body(t)
	first, err := Plan(body, parse(t, body), 0, []string{"b", "a"}, testNow, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	keep := DefaultConfig()
	keep.ResetBudget = false
	again, err := Plan(first.Body, parse(t, first.Body), 0, []string{"a", "b", "a"}, testNow.Add(time.Hour), keep)
	if err != nil {
		t.Fatal(err)
	}
	if again.Removed != 0 || len(again.Archives) != 0 || again.SHA256 != "" {
		t.Errorf("re-plan removed %d entries, %d archives", again.Removed, len(again.Archives))
	}
	if again.Body != first.Body || !again.Grew {
		t.Errorf("re-plan changed the body:\n%s\n---\n%s", first.Body, again.Body)
	}
	// With the budget reset it is halved again, and still archives nothing.
	reset, err := Plan(first.Body, parse(t, first.Body), 0, []string{"a", "b"}, testNow, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if reset.Removed != 0 || reset.NewBudget.Total != first.NewBudget.Total/2 {
		t.Errorf("removed %d, budget %+v", reset.Removed, reset.NewBudget)
	}
}

func TestPlanRejects(t *testing.T) {
	body := "```yaml\ncheckpoint:\n  version: 3\n```\n"
	if _, err := Plan(body, parse0(body), 0, nil, testNow, DefaultConfig()); err == nil {
		t.Error("an invalid checkpoint was planned")
	}
	good := spec{Total: 10, Entries: randEntries(rand.New(rand.NewPCG(1, 1)), 5)}.body(t)
	for _, cfg := range []Config{{TailLimit: -1, CarryoverRatio: 0.5}, {MaxCommentChars: 100, CarryoverRatio: 0.5}, {CarryoverRatio: -0.1}} {
		if _, err := Plan(good, parse(t, good), 0, nil, testNow, cfg); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
}

func TestLabelsSorted(t *testing.T) {
	body := spec{Total: 10, Entries: []Entry{{Agent: "a", Action: "b", Timestamp: "2026-01-01T00:00:00Z"}}, Tail: true}.body(t)
	res, err := Plan(body, parse(t, body), 0, []string{"size::small", "cascade::depth-1", "size::small", "with space"}, testNow, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Body, `labels: [cascade::depth-1, size::small, with space]`) {
		t.Errorf("labels:\n%s", res.Body)
	}
}

func TestSupersedes(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	orig := randEntries(rng, 12)
	v1 := spec{Total: 1000, Consumed: 900, Entries: orig}.body(t)
	p1, err := Plan(v1, parse(t, v1), 0, nil, testNow, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	a1, err := ParseArchive(p1.Archives[0])
	if err != nil {
		t.Fatal(err)
	}
	// The body was never patched, and an agent appended an entry.
	more := append(slices.Clone(orig), Entry{Agent: "late", Action: "appended"})
	v2 := spec{Total: 1000, Consumed: 950, Entries: more}.body(t)
	p2, err := Plan(v2, parse(t, v2), 0, nil, testNow, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if !p2.Supersedes(a1) {
		t.Error("an unpatched archive is not superseded")
	}
	if p1.Supersedes(a1) {
		t.Error("an archive supersedes itself")
	}
	// After the patch its entries are gone from the body.
	p3, err := Plan(p1.Body, parse(t, p1.Body), 0, nil, testNow, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if p3.Supersedes(a1) {
		t.Error("a patched archive is superseded")
	}
	other := *a1
	other.Issue = 7
	if p2.Supersedes(&other) || p2.Supersedes(nil) {
		t.Error("another issue's archive is superseded")
	}
}
