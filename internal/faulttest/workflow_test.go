package faulttest

import (
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/actiontest"
	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

var workflowSteps = flag.Int("workflow-steps", 1000, "agent steps of TestLongWorkflowKeepsEveryEntry")

// editedWith matches the "edited" delivery of the administrator's edit
// that wrote invocation into the checkpoint.
func editedWith(n int64, sender, invocation string) func(actiontest.Delivery) bool {
	return func(d actiontest.Delivery) bool {
		if d.Event != "issues" || d.Action != "edited" || d.Number != n || d.Sender != sender {
			return false
		}
		var p struct {
			Issue struct {
				Body string `json:"body"`
			} `json:"issue"`
		}
		return json.Unmarshal(d.Payload, &p) == nil && strings.Contains(p.Issue.Body, "last_invocation: "+invocation+"\n")
	}
}

// blockTokens counts the tokens of the body's checkpoint block, as an
// agent loading it pays them.
func blockTokens(t testing.TB, c *tokens.Counter, body string) int {
	t.Helper()
	bs := checkpoint.Find(body, 1<<20)
	if len(bs) != 1 {
		t.Fatalf("the body holds %d checkpoint blocks, want 1:\n%s", len(bs), body)
	}
	return c.Count(bs[0].Raw())
}

// A long agent workflow: step after step an agent posts its result comment
// and records the step in the checkpoint (a fourth history_tail entry,
// budget consumed), and the guard runs on the edit. The guard archives
// what falls out of the tail every step and starts a new phase budget when
// the old one runs low. At the end the full history, rebuilt by `gns-guard
// history` from the server, is every entry the agents ever wrote, in order;
// and the checkpoint never outgrew the overhead its task size allows.
func TestLongWorkflowKeepsEveryEntry(t *testing.T) {
	t.Parallel()
	f := actiontest.NewRepo(t)
	n, _ := f.Open(t, "a long agent workflow", func(n int64) string { return actiontest.Example(t, "healthy.md", n) }, "cascade::depth-2", "size::medium")
	const overhead = 1200 // size::medium (SPEC section 3)
	// Each phase budget ends with a prune that carries half of what is left
	// over and grants 20000 more.
	step := f.Step("phase-grant", "20000")
	counter, err := tokens.New(tokens.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	first := f.Issue(t, n)
	cp, err := decode(first.Body)
	if err != nil {
		t.Fatal(err)
	}
	record := entries(cp.HistoryTail) // every entry ever written, in order
	agents := []string{"lead-developer", "code-reviewer", "tester", "architect"}
	phases := []string{"implementation", "review", "testing", "release"}
	base := time.Date(2026, 5, 16, 14, 0, 0, 0, time.UTC)

	var maxAgent, maxGuard, maxAgentStep, maxGuardStep, resets int
	var guardRequests int
	var agentTime, guardTime, runsTime time.Duration
	total := cp.Budget.Total
	began := time.Now()
	steps := *workflowSteps
	t.Logf("%5s %12s %12s %7s %9s %10s", "step", "tokens:agent", "tokens:guard", "entries", "remaining", "elapsed")
	for k := 1; k <= steps; k++ {
		agent, next := agents[k%len(agents)], agents[(k+1)%len(agents)]
		inv := fmt.Sprintf("inv-%04d", k)
		phase := phases[(k-1)*len(phases)/steps]
		cost := int64(150 + (k*37)%300)
		e := entry{Agent: agent, Action: fmt.Sprintf("step %d: %s finished its part of %s", k, agent, phase), Timestamp: base.Add(time.Duration(k) * time.Minute).Format(time.RFC3339)}

		t0 := time.Now()
		var before, remaining int64
		var loaded int
		body := edit(t, f, n, func(body string, cp *doc) string {
			loaded = blockTokens(t, counter, body) // what this agent loaded on entry
			if cp.Budget.Total != total {          // the guard started a new phase budget
				resets++
				total = cp.Budget.Total
			}
			before = cp.Budget.Remaining
			cp.Phase, cp.LastAgent, cp.LastInvocation = phase, agent, inv
			cp.Budget.Consumed += cost
			cp.Budget.Remaining = cp.Budget.Total - cp.Budget.Consumed
			cp.HistoryTail = append(cp.HistoryTail, e)
			cp.AgentChain = []string{"orchestrator", agent}
			cp.State.Assignee, cp.NextAgent = agent, next
			cp.CurrentTask = fmt.Sprintf("hand step %d to %s", k+1, next)
			cp.NextEstimatedTokens = 1500
			remaining = cp.Budget.Remaining
			return body
		})
		record = append(record, e.prune())
		f.Comment(t, n, f.Admin(), agentComment(agent, inv, phase, 1, before, cost, remaining, next, fmt.Sprintf("Step %d done by %s.", k, agent)))
		written := blockTokens(t, counter, body)
		if k > 1 && loaded > maxGuard {
			maxGuard, maxGuardStep = loaded, k-1
		}
		if written > maxAgent {
			maxAgent, maxAgentStep = written, k
		}
		// The run the server recorded for this edit drives the guard.
		tw := time.Now()
		d := f.Runs.Next(t, editedWith(n, f.S.AdminLogin, inv))
		runsTime += time.Since(tw)
		t1 := time.Now()
		agentTime += t1.Sub(t0)

		r := step.RunInProcess(t, d, actiontest.InProcess{})
		guardTime += time.Since(t1)
		if r.Code != 0 || r.Outputs["pruned"] != "true" {
			t.Fatalf("step %d: exit %d, pruned %q (a fourth tail entry is always archived)\n%s", k, r.Code, r.Outputs["pruned"], r.Stdout)
		}
		guardRequests += r.Requests
		if k == 1 || k%50 == 0 {
			guardTokens, _ := strconv.Atoi(r.Outputs["checkpoint-tokens"])
			t.Logf("%5d %12d %12d %7d %9s %10s", k, written, guardTokens, len(record), r.Outputs["budget-remaining"], time.Since(began).Round(time.Millisecond))
		}
	}
	final := f.Issue(t, n)
	if got := blockTokens(t, counter, final.Body); got > maxGuard {
		maxGuard, maxGuardStep = got, steps
	}
	t.Logf("%d steps in %s: agents %s, guard %s (%.1f API requests a run); %d phase budgets started",
		steps, time.Since(began).Round(time.Millisecond), agentTime.Round(time.Millisecond), guardTime.Round(time.Millisecond), float64(guardRequests)/float64(steps), resets)
	t.Logf("reading the recorded runs: %s", runsTime)
	t.Logf("largest checkpoint: %d tokens as an agent wrote it (step %d), %d as the guard left it (step %d); the overhead of a medium task is %d",
		maxAgent, maxAgentStep, maxGuard, maxGuardStep, overhead)
	if maxAgent > overhead || maxGuard > overhead {
		t.Errorf("the checkpoint grew to %d tokens (agent) / %d (guard), over the %d a medium task allows", maxAgent, maxGuard, overhead)
	}
	if resets == 0 {
		t.Errorf("no prune started a new phase budget in %d steps", steps)
	}

	archives := archives(t, f, n)
	if len(archives) != steps {
		t.Errorf("%d archive comments, want one per step (%d)", len(archives), steps)
	}
	if dups := duplicateArchives(archives); len(dups) > 0 {
		t.Errorf("duplicate archives:\n%s", strings.Join(dups, "\n"))
	}
	hist := history(t, f, n)
	sameHistory(t, hist, record)
	t.Logf("gns-guard history rebuilt all %d entries from %d archive comments and the tail", len(hist), len(archives))
}
