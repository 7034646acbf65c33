package cli_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkReport times one report on the real server, in a repository
// whose meter signs receipts: written by the agent itself (direct), and
// sent to the gate, which judges it and writes
// it as its account (through-gate). The gate's spawn of each invocation
// is outside the timer. One report and the guard's run on it come first,
// so the guard's record knows the writer, as on any issue in use; the
// meter keeps what it reads a millisecond, as cold as between reports.
// .ci/bench prints the ratio.
func BenchmarkReport(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		f := newFlow(b, 1_000_000, "cascade::depth-3", "size::medium")
		rm := startMeter(b, f.r, filepath.Join(b.TempDir(), "meter.db"), nil)
		f.r.CommitFile(b, ".gitea/gns-guard.yml", meterConfig(rm))
		repo, n := f.r.Owner+"/"+f.r.Name, strconv.FormatInt(f.n, 10)
		reportOnce(b, f.r.S.URL, repo, n, f.agent.Token, "warm-up")
		f.guard(b)
		b.ResetTimer()
		for i := range b.N {
			reportOnce(b, f.r.S.URL, repo, n, f.agent.Token, fmt.Sprintf("bench-%d", i))
		}
	})
	b.Run("through-gate", func(b *testing.B) {
		g := newGatedFlow(b)
		repo, n := g.r.Owner+"/"+g.r.Name, strconv.FormatInt(g.n, 10)
		reportOnce(b, g.r.S.URL, repo, n, g.reader.Token, g.spawn(b, "", "lead-developer", 10).Invocation)
		g.guard(b)
		b.ResetTimer()
		for range b.N {
			b.StopTimer()
			inv := g.spawn(b, "", "lead-developer", 10).Invocation
			b.StartTimer()
			reportOnce(b, g.r.S.URL, repo, n, g.reader.Token, inv)
		}
	})
}

// reportOnce reports invocation inv as token's user; the benchmark
// stops if it is not written.
func reportOnce(b *testing.B, server, repo, n, token, inv string) {
	out, errOut, code := gns(b, nil, "report", "--repo", repo, "--issue", n, "--server", server, "--token", token,
		"--agent", "lead-developer", "--invocation", inv, "--consumed", "10", "--action", "one step", "--next-agent", "lead-developer",
		"--next-estimate", "10", "--format", "json")
	if code != 0 {
		b.Fatalf("report %s: exit %d\n%s\n%s", inv, code, out, errOut)
	}
}
