package prune

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
)

// FuzzPlan checks that Plan never panics, and that whenever it succeeds the
// full history is rebuilt exactly from its archives and the new body.
func FuzzPlan(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "prune", "*.md"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(string(b), uint8(3), uint16(0))
		}
	}
	f.Add(spec{Total: 100, Consumed: 90, Entries: hostile}.body(f), uint8(1), uint16(3000))
	f.Add(spec{Total: 100, Consumed: 90, Entries: hostile, Tail: true, CRLF: true}.body(f), uint8(2), uint16(0))
	f.Add(spec{Total: 5, Consumed: 9, Entries: hostile[:1], Bare: true}.body(f), uint8(0), uint16(0))
	f.Fuzz(func(t *testing.T, body string, tail uint8, chars uint16) {
		r := checkpoint.Parse(body, checkpoint.Options{})
		cfg := DefaultConfig()
		cfg.TailLimit = int(tail % 8)
		cfg.MaxCommentChars = 0
		if chars > 0 {
			cfg.MaxCommentChars = minCommentChars + int(chars)
		}
		res, err := Plan(body, r, 0, []string{"b", "a"}, testNow, cfg)
		if err != nil || !r.Valid() {
			if err == nil {
				t.Fatal("Plan accepted an invalid checkpoint")
			}
			return
		}
		cp := r.Checkpoint
		orig := FromCheckpoint(cp.Entries())
		want := expected(orig, cfg.tailLimit(), !cp.HistoryTail.Set, testNow)
		checkLossless(t, res, want, cfg.maxChars())
		if !slices.Equal(res.Archived, orig[:res.Removed]) {
			t.Fatal("Archived is not the oldest entries")
		}
	})
}
