package faulttest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/prune"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

var (
	workflowSteps = flag.Int("workflow-steps", 1000, "agent steps of TestLongWorkflowKeepsEveryEntry")
	workflowRound = flag.Int("workflow-round", 5, "TestLongWorkflowKeepsEveryEntry: the server sees every Nth step (1: every step)")
)

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

// offlineCheck is what `gns-guard check --format json` makes of a body: the
// guard's decision without the server.
type offlineCheck struct {
	Findings []struct {
		Rule     string `json:"rule"`
		Severity string `json:"severity"`
		Message  string `json:"message"`
	} `json:"findings"`
	Plan    []string `json:"plan"`
	Numbers struct {
		CheckpointTokens int `json:"checkpoint_tokens"`
	} `json:"numbers"`
}

var archivedRE = regexp.MustCompile(`^patch the body: (\d+) entries archived`)

// checkOffline runs `gns-guard check` on body with the issue's labels and
// fails the test unless the guard would pass it and archive exactly
// archive entries. Offline, a history_tail over its limit is an error
// (`check` validates what an agent is about to write); in action mode it is
// what the prune remedies, so that is the one error allowed. It returns the
// checkpoint's tokens as the guard counts them.
func checkOffline(t testing.TB, body string, labels []string, archive int, what string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, actiontest.Binary(t), "check", "--format", "json", "--labels", strings.Join(labels, ","), "-")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	cmd.Stdin = strings.NewReader(body)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var c offlineCheck
	if jerr := json.Unmarshal(stdout.Bytes(), &c); jerr != nil || stderr.Len() > 0 {
		t.Fatalf("%s: gns-guard check: %v, %v\n%s%s", what, err, jerr, stdout.String(), stderr.String())
	}
	for _, x := range c.Findings {
		if x.Severity == "error" && x.Rule != "history-tail-length" {
			t.Fatalf("%s: gns-guard check finds an error: %s: %s\n%s", what, x.Rule, x.Message, body)
		}
	}
	planned := -1
	for _, w := range c.Plan {
		if m := archivedRE.FindStringSubmatch(w); m != nil {
			planned, _ = strconv.Atoi(m[1])
		}
	}
	if planned != archive {
		t.Fatalf("%s: the guard would archive %d entries, want %d; its plan: %q", what, planned, archive, c.Plan)
	}
	return c.Numbers.CheckpointTokens
}

// dueArchive is how many entries the guard archives from cp: all but the
// last keep once the tail is past twice keep (archives come in batches,
// docs/choices.md#pruning) or the budget is over prune-threshold (0.8);
// -1 when it archives nothing.
func dueArchive(cp *doc, keep int) int {
	n := len(cp.HistoryTail)
	if n > 2*keep || float64(cp.Budget.Consumed) > 0.8*float64(cp.Budget.Total) {
		return n - keep
	}
	return -1
}

// A long agent workflow: step after step an agent records its step in the
// checkpoint (a history_tail entry, budget consumed), and the guard prunes
// what falls out of the tail into archive comments and starts a new phase
// budget when the old one runs low. The server sees every
// -workflow-round-th step: the agent's compare-and-swap edit, which holds
// the steps of its round, and its result comment; the guard runs on the
// payload of the run the server recorded for the edit, in process, and
// archives the round's entries. The steps between are judged as the guard
// judges them without the server (`gns-guard check` on the body as the
// agent left it): each passes, and the guard would archive what is due
// (dueArchive; a round of 5 takes the tail past twice its length, so every
// run the server sees archives). At the end the full history, rebuilt by `gns-guard history`
// from the server, is every entry the agents ever wrote, in order; each
// archive comment holds exactly the entries of its round; and the
// checkpoint never outgrew the overhead its task size allows.
func TestLongWorkflowKeepsEveryEntry(t *testing.T) {
	t.Parallel()
	steps, round := *workflowSteps, *workflowRound
	if steps < 1 || round < 1 {
		t.Fatalf("-workflow-steps %d and -workflow-round %d must be positive", steps, round)
	}
	f := actiontest.NewRepo(t)
	labels := []string{"cascade::depth-2", "size::medium"}
	n, opened := f.Open(t, "a long agent workflow", func(n int64) string { return actiontest.Example(t, "healthy.md", n) }, labels...)
	const overhead = 1200 // size::medium (docs/contract.md §3)
	const keep = 3        // history-tail: the entries a prune leaves in the body
	// Each phase budget ends with a prune that carries half of what is left
	// over and grants 20000 more.
	step := f.Step("phase-grant", "20000")
	// The guard's run on the opening adopts the state as opened.
	if r := step.RunInProcess(t, opened, actiontest.InProcess{}); r.Code != 0 {
		t.Fatalf("the run on the opening: %s", r)
	}
	counter, err := tokens.New(tokens.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	first := f.Issue(t, n)
	cp, err := decode(first.Body)
	if err != nil {
		t.Fatal(err)
	}
	if len(cp.HistoryTail) != keep {
		t.Fatalf("the example's history_tail holds %d entries, want %d", len(cp.HistoryTail), keep)
	}
	record := entries(cp.HistoryTail) // every entry ever written, in order
	// rounds[i] is what the i-th guard run must archive: the entries past
	// the tail, written since the run before.
	var rounds [][]prune.Entry
	agents := []string{"lead-developer", "code-reviewer", "tester", "architect"}
	phases := []string{"implementation", "review", "testing", "release"}
	base := time.Date(2026, 5, 16, 14, 0, 0, 0, time.UTC)

	// stepK is agent step k: what it reports in its result comment after
	// recording itself in cp.
	type stepK struct {
		agent, next, inv, phase string
		before, cost, remaining int64
		entry                   prune.Entry
	}
	agentStep := func(k int, cp *doc) stepK {
		s := stepK{agent: agents[k%len(agents)], next: agents[(k+1)%len(agents)], inv: fmt.Sprintf("inv-%04d", k), phase: phases[(k-1)*len(phases)/steps]}
		e := entry{Agent: s.agent, Action: fmt.Sprintf("step %d: %s finished its part of %s", k, s.agent, s.phase), Timestamp: base.Add(time.Duration(k) * time.Minute).Format(time.RFC3339)}
		s.cost, s.before = int64(150+(k*37)%300), cp.Budget.Remaining
		cp.Phase, cp.LastAgent, cp.LastInvocation = s.phase, s.agent, s.inv
		cp.Budget.Consumed += s.cost
		cp.Budget.Remaining = cp.Budget.Total - cp.Budget.Consumed
		cp.HistoryTail = append(cp.HistoryTail, e)
		cp.AgentChain = []string{"orchestrator", s.agent}
		cp.State.Assignee, cp.NextAgent = s.agent, s.next
		cp.CurrentTask = fmt.Sprintf("hand step %d to %s", k+1, s.next)
		cp.NextEstimatedTokens = 1500
		s.remaining, s.entry = cp.Budget.Remaining, e.prune()
		return s
	}

	var maxAgent, maxGuard, maxAgentStep, maxGuardStep, resets, offline, guardRequests int
	var agentTime, guardTime, offlineTime time.Duration
	total := cp.Budget.Total
	began := time.Now()
	t.Logf("%5s %12s %12s %7s %9s %10s", "step", "tokens:agent", "tokens:guard", "entries", "remaining", "elapsed")
	for k0 := 1; k0 <= steps; k0 += round {
		last := min(k0+round-1, steps)
		t0 := time.Now()
		// The round's agents, one after the other, on the body as the guard
		// left it. edit calls this again after a conflict: it starts over.
		var written []prune.Entry
		var end stepK
		var seenTotal int64
		var off time.Duration
		body := edit(t, f, n, func(body string, cp *doc) string {
			if loaded := blockTokens(t, counter, body); k0 > 1 && loaded > maxGuard {
				maxGuard, maxGuardStep = loaded, k0-1
			}
			seenTotal, written, off = cp.Budget.Total, written[:0], 0
			for k := k0; k <= last; k++ {
				end = agentStep(k, cp)
				written = append(written, end.entry)
				if k == last {
					break // the server sees this one
				}
				b, err := encode(body, cp)
				if err != nil {
					t.Fatal(err)
				}
				if got := blockTokens(t, counter, b); got > maxAgent {
					maxAgent, maxAgentStep = got, k
				}
				to := time.Now()
				if got := checkOffline(t, b, labels, dueArchive(cp, keep), fmt.Sprintf("step %d", k)); got > maxGuard {
					maxGuard, maxGuardStep = got, k
				}
				off += time.Since(to)
			}
			return body
		})
		if seenTotal != total { // the guard started a new phase budget
			resets++
			total = seenTotal
		}
		offline += last - k0
		offlineTime += off
		record = append(record, written...)
		rounds = append(rounds, slices.Clone(record[len(record)-keep-len(written):len(record)-keep]))
		f.Comment(t, n, f.Admin(), agentComment(end.agent, end.inv, end.phase, 1, end.before, end.cost, end.remaining, end.next, fmt.Sprintf("Step %d done by %s.", last, end.agent)))
		wrote := blockTokens(t, counter, body)
		if wrote > maxAgent {
			maxAgent, maxAgentStep = wrote, last
		}
		// The run the server recorded for this edit drives the guard.
		d := f.Runs.Next(t, editedWith(n, f.S.AdminLogin, end.inv))
		t1 := time.Now()
		agentTime += t1.Sub(t0) - off

		r := step.RunInProcess(t, d, actiontest.InProcess{})
		guardTime += time.Since(t1)
		var ids []int64
		actiontest.DecodeJSON(t, r, "archive-comment-ids", &ids)
		if r.Code != 0 || r.Outputs["result"] != "pass" || r.Outputs["pruned"] != "true" || len(ids) != 1 {
			t.Fatalf("step %d: exit %d, result %q, pruned %q, archive comments %v (the entries past the tail are always archived, in one comment)\n%s",
				last, r.Code, r.Outputs["result"], r.Outputs["pruned"], ids, r.Stdout)
		}
		guardRequests += r.Requests
		if k0 == 1 || last/50 > (k0-1)/50 {
			guardTokens, _ := strconv.Atoi(r.Outputs["checkpoint-tokens"])
			t.Logf("%5d %12d %12d %7d %9s %10s", last, wrote, guardTokens, len(record), r.Outputs["budget-remaining"], time.Since(began).Round(time.Millisecond))
		}
	}
	final := f.Issue(t, n)
	if got := blockTokens(t, counter, final.Body); got > maxGuard {
		maxGuard, maxGuardStep = got, steps
	}
	t.Logf("%d steps in %s: %d the server saw (agents %s, guard %s, %.1f API requests a run), %d judged offline (%s); %d phase budgets started",
		steps, time.Since(began).Round(time.Millisecond), len(rounds), agentTime.Round(time.Millisecond), guardTime.Round(time.Millisecond),
		float64(guardRequests)/float64(len(rounds)), offline, offlineTime.Round(time.Millisecond), resets)
	t.Logf("largest checkpoint: %d tokens as an agent wrote it (step %d), %d as the guard left or would leave it (step %d); the overhead of a medium task is %d",
		maxAgent, maxAgentStep, maxGuard, maxGuardStep, overhead)
	if maxAgent > overhead || maxGuard > overhead {
		t.Errorf("the checkpoint grew to %d tokens (agent) / %d (guard), over the %d a medium task allows", maxAgent, maxGuard, overhead)
	}
	if resets == 0 {
		t.Errorf("no prune started a new phase budget in %d steps", steps)
	}

	archives := archives(t, f, n)
	if dups := duplicateArchives(archives); len(dups) > 0 {
		t.Errorf("duplicate archives:\n%s", strings.Join(dups, "\n"))
	}
	if len(archives) != len(rounds) {
		t.Errorf("%d archive comments, want one per guard run (%d)", len(archives), len(rounds))
	} else {
		for i := range archives {
			if slices.Equal(archives[i].Entries, rounds[i]) {
				continue
			}
			t.Errorf("archive comment %d (%d of %d) does not hold the %d entries of its round:\n got  %+v\n want %+v",
				archives[i].ID, i+1, len(archives), len(rounds[i]), archives[i].Entries, rounds[i])
		}
	}
	hist := history(t, f, n)
	sameHistory(t, hist, record)
	t.Logf("gns-guard history rebuilt all %d entries from %d archive comments and the tail", len(hist), len(archives))
}
