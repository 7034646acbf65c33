package guard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// bigBody is an issue body whose checkpoint block is as large as
// max-checkpoint-bytes lets it be parsed (64 KiB): a long full history, as
// an issue reaches it when nothing prunes.
func bigBody(b *testing.B) (body, block string) {
	b.Helper()
	head := `checkpoint:
  version: 2
  issue: 9
  phase: implementation
  depth: 1
  last_agent: lead-developer
  last_invocation: inv-20260516-1320-a7
  budget:
    total: 200000
    consumed: 61000
    remaining: 139000
  state:
    labels: [cascade::depth-2, size::large]
    assignee: lead-developer
  current_task: wire the limiter into the gateway config and document the limits per key
  agent_chain: [orchestrator, lead-developer]
  next_agent: code-reviewer
  next_estimated_tokens: 3500
  created_at: "2026-05-16T12:50:00Z"
  history:
`
	agents := []string{"orchestrator", "architect", "lead-developer", "code-reviewer", "qa-engineer"}
	actions := []string{
		"split the task into 3 subtasks and estimated each",
		"chose a token bucket per API key, refilled every second",
		"implemented the middleware, 14 unit tests, 2 benchmarks",
		"reviewed the middleware: two nits on naming, approved",
		"ran the load test at 2k rps: p99 41 ms, no 5xx",
	}
	var sb strings.Builder
	sb.WriteString(head)
	limit := checkpoint.DefaultMaxBytes
	start := time.Date(2026, 5, 16, 13, 0, 0, 0, time.UTC)
	for i := 0; ; i++ {
		e := fmt.Sprintf("    - {agent: %s, action: %q, invocation: inv-%05d, timestamp: %q}\n",
			agents[i%len(agents)], actions[i%len(actions)], i, start.Add(time.Duration(i)*time.Minute).Format(time.RFC3339))
		if sb.Len()+len(e) > limit {
			break
		}
		sb.WriteString(e)
	}
	block = sb.String()
	body = "# Add rate limiting to the public API\n\nThe gateway needs per-token rate limits.\n\n```yaml\n" + block + "```\n\nAcceptance: 429 with Retry-After.\n"
	blocks := checkpoint.Find(body, 0)
	if len(blocks) != 1 || blocks[0].Raw() != block {
		b.Fatal("the benchmark body does not hold exactly its checkpoint block")
	}
	if r := checkpoint.Parse(body, checkpoint.Options{Issue: 9}); !r.Valid() {
		b.Fatalf("the benchmark checkpoint is not valid: %v", r.Findings)
	}
	return body, block
}

func benchInput(b *testing.B, body string) Input {
	b.Helper()
	c, err := tokens.New(tokens.CL100kBase)
	if err != nil {
		b.Fatal(err)
	}
	in := Input{
		Config: config.Default(),
		Issue: issues.Issue{Number: 9, Body: body, Labels: []issues.Label{
			{ID: 1, Name: "cascade::depth-2"}, {ID: 2, Name: "size::large"},
		}},
		Event:   issues.Event{Name: "issues", Action: "edited", Number: 9, Sender: "alice"},
		Self:    issues.ActionsUser,
		Now:     time.Date(2026, 5, 16, 14, 0, 0, 0, time.UTC),
		Counter: c,
	}
	for i := range 3 {
		in.Recent = append(in.Recent, issues.Comment{ID: int64(i + 1), Author: "lead-developer",
			Body: fmt.Sprintf("## 🔄 lead-developer | phase:implementation | depth:1\n\nStep %d done: middleware wired, tests green.\n", i)})
	}
	return in
}

// BenchmarkCheckpoint64KiB measures each stage of a decision on a
// checkpoint of the largest parsed size. Every sub-benchmark reports MB/s
// over the same block bytes, so their costs per byte compare directly:
//
//	find    locate the fenced block in the body
//	parse   find, decode and validate against schema v2 (what check does)
//	count   count the block's tokens (cl100k_base)
//	decide  guard.Decide: every rule, the entry-load gate and the pruning
//	        plan (archive comments, rewritten body), as one run does
func BenchmarkCheckpoint64KiB(b *testing.B) {
	body, block := bigBody(b)
	in := benchInput(b, body)
	if p := Decide(in); p.Prune == nil {
		b.Fatalf("expected the 64 KiB checkpoint to be pruned; plan: %+v", p.Numbers)
	}
	size := int64(len(block))
	b.Run("find", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			checkpoint.Find(body, 0)
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			checkpoint.Parse(body, checkpoint.Options{Issue: 9})
		}
	})
	b.Run("count", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			in.Counter.Count(block)
		}
	})
	b.Run("decide", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			Decide(in)
		}
	})
}
