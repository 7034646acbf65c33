package cli

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/handoff"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/status"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// The agreement test over sequences: random honest workflows on the pure
// core. An issue is opened from init's template; then, step after step,
// an agent reports as `report` does (handoff: a result of a few
// hundred words, tokens consumed, a next estimate taken from what the
// entry load leaves available, a smaller one when refused) and, when
// `report` accepts, the guard runs on what it left, twice (the report's
// edit and its comment are two events), each run's writes made as the
// action makes them (status.NextInput: prune and archive, digest, the status
// comment updated or moved to the end). Every guard run after an accepted
// report must pass: `report` never accepts what the guard then fails.

const (
	seqSteps     = 15
	seqAgentUser = "agent-bot"
	seqOpener    = "alice"
	seqNumber    = 2
)

var seqAgents = []string{"orchestrator", "architect", "lead-developer", "code-reviewer", "tester"}

// seqSentences make up result texts.
var seqSentences = []string{
	"The rate limiter now keeps one token bucket per API key and refills it on read, so idle keys cost nothing.",
	"I split the gateway configuration into limits and routes; the old keys still load and log a deprecation warning.",
	"The integration tests start the gateway on a free port and hammer it with forty concurrent clients for two seconds.",
	"Retry-After is computed from the bucket's deficit and rounded up to whole seconds, as RFC 9110 asks.",
	"Two findings remain open: the metrics label cardinality grows with keys, and the refill uses the wall clock.",
	"Coverage of internal/ratelimit went from 61% to 88%; the remaining lines are error paths of the Redis store.",
	"The reviewer asked for a monotonic clock; time.Now is now read once per request and passed down.",
	"Benchmarks: 1.9 µs per request with the in-memory store, 0.4 ms with Redis on loopback, no allocations on the hot path.",
	"I left the public API unchanged; the middleware's constructor takes an optional Store and defaults to memory.",
	"The design note in docs/limits.md explains the burst parameter with a worked example of a client that backs off.",
	"Edge case: a key whose limit is changed while it is throttled keeps its deficit and gets the new rate from the next refill.",
	"The tester found that a negative limit in the configuration crashed the loader; it is now a startup error naming the key.",
	"Next, the code reviewer should read bucket.go and store_redis.go; the rest of the change is tests and documentation.",
	"All 214 tests pass on Linux and macOS; the race detector is clean over ten runs of the concurrency suite.",
}

// seqResult is a result text of about words words.
func seqResult(rng *rand.Rand, words int) string {
	var b strings.Builder
	n := 0
	for n < words {
		s := seqSentences[rng.IntN(len(seqSentences))]
		b.WriteString(s)
		n += len(strings.Fields(s))
		if rng.IntN(4) == 0 {
			b.WriteString("\n\n")
		} else {
			b.WriteString(" ")
		}
	}
	return b.String()
}

// seqTally counts what the workflows did.
type seqTally struct {
	steps, accepted, refusals, done, stopped, guardRuns, failedRuns, prunes, digests, moves int
	maxRatio                                                                                float64
}

// TestAgreementSequences runs the honest workflows.
func TestAgreementSequences(t *testing.T) {
	t.Parallel()
	start := time.Now()
	// 30 workflows take some seconds of CPU; GNS_GUARD_SEQUENCES=200
	// runs more.
	seqWorkflows := 30
	if v, err := strconv.Atoi(os.Getenv("GNS_GUARD_SEQUENCES")); err == nil && v > 0 {
		seqWorkflows = v
	}
	counter, err := tokens.New(tokens.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	var tally seqTally
	failures := 0
	for w := range seqWorkflows {
		s := newSeq(t, w, counter, &tally)
		if !s.open() {
			failures++
			continue
		}
		for step := range seqSteps {
			if ok, more := s.step(step); !ok {
				failures++
				break
			} else if !more {
				break
			}
		}
		if failures >= 5 {
			t.Fatalf("stopping after %d failing workflows", failures)
		}
	}
	t.Logf("%d workflows of up to %d steps: %d reports, %d accepted, %d refusals (the agent then asked for less), %d workflows done, %d stopped (the budget needs a person); %d guard runs, %d failed; %d prunes, %d digests, %d status comments moved; highest entry ratio %.0f%%",
		seqWorkflows, seqSteps, tally.steps, tally.accepted, tally.refusals, tally.done, tally.stopped, tally.guardRuns, tally.failedRuns, tally.prunes, tally.digests, tally.moves, tally.maxRatio*100)
	if tally.prunes == 0 || tally.moves == 0 || tally.done == 0 || tally.refusals == 0 {
		t.Errorf("the workflows never pruned, moved the status comment, ended or were refused: they test too little")
	}
	t.Logf("ran in %v", time.Since(start).Round(time.Millisecond))
}

// seq is one workflow: the issue as the guard reads it.
type seq struct {
	t     *testing.T
	w     int
	rng   *rand.Rand
	in    guard.Input
	all   []issues.Comment // every comment of the issue, oldest first
	now   time.Time
	tally *seqTally
	// numbers are the last guard run's figures.
	numbers guard.Numbers
	log     []string // what happened, for a failure's message
}

func newSeq(t *testing.T, w int, counter *tokens.Counter, tally *seqTally) *seq {
	rng := rand.New(rand.NewPCG(uint64(w), 28))
	size := []string{"size::tiny", "size::small", "size::small", "size::medium"}[rng.IntN(4)]
	body := string(issueTemplate)
	if _, rest, ok := strings.Cut(strings.TrimPrefix(body, "---\n"), "\n---\n"); ok {
		body = rest // the template's front matter is not the issue's body
	}
	// A person fills in the issue's number, as the template asks.
	body = strings.Replace(body, "issue: 0", fmt.Sprintf("issue: %d", seqNumber), 1)
	body = strings.Replace(body, "size::small]", size+"]", 1)
	now := agreeStart.Add(time.Duration(w) * time.Hour)
	iss := issues.Issue{Number: seqNumber, Title: "rate limiter", Body: body, State: "open", ContentVersion: 0, UpdatedAt: now}
	for i, l := range []string{"cascade::depth-2", size} {
		iss.Labels = append(iss.Labels, issues.Label{ID: int64(i + 1), Name: l})
	}
	in := guard.Input{Config: config.Default(), Issue: iss, Self: issues.ActionsUser, Repo: agreeRepo, Now: now, Counter: counter,
		Event: issues.Event{Name: "issues", Action: "opened", Number: seqNumber, Sender: seqOpener}}
	return &seq{t: t, w: w, rng: rng, in: in, now: now, tally: tally}
}

// view sets the comments of the input as the guard's reader reads them:
// the last RecentWindow comments, the status comment and what lies
// between it and them.
func (s *seq) view() {
	k := s.in.Config.RecentWindow()
	cut := max(0, len(s.all)-k)
	s.in.Recent, s.in.Older, s.in.Status = slices.Clone(s.all[cut:]), nil, nil
	for i := len(s.all) - 1; i >= 0; i-- {
		c := s.all[i]
		if c.Author == s.in.Self && strings.Contains(c.Body, issues.StatusMarker(seqNumber)) && !strings.Contains(c.Body, "gns-guard:archive") {
			s.in.Status = &s.all[i]
			if i < cut {
				s.in.Older = slices.Clone(s.all[i:cut])
			}
			break
		}
	}
}

// absorb takes the comments of next (an input After or Next made from the
// view) into the issue's; the guard's older status comments are deleted,
// as the action deletes them when it posts its status comment anew.
func (s *seq) absorb(next guard.Input) {
	cut := max(0, len(s.all)-len(s.in.Recent))
	s.all = append(s.all[:cut:cut], next.Recent...)
	if st := next.Status; st != nil {
		s.all = slices.DeleteFunc(s.all, func(c issues.Comment) bool {
			return c.ID != st.ID && c.Author == s.in.Self && strings.Contains(c.Body, issues.StatusMarker(seqNumber)) && !strings.Contains(c.Body, "gns-guard:archive")
		})
	}
	s.in = next
	s.view()
}

// tick moves the clock on.
func (s *seq) tick() {
	s.now = s.now.Add(time.Duration(1+s.rng.IntN(20)) * time.Minute)
	s.in.Now = s.now
}

// decide is the guard's decision, every user asked about no admin.
func seqDecide(in guard.Input) (*guard.Plan, error) {
	in.Admins = map[string]bool{}
	for {
		p := guard.Decide(in)
		if p.AskAdmin == "" || len(in.Admins) > 3 {
			return p, nil
		}
		in.Admins[p.AskAdmin] = false
	}
}

// run is one guard run on event: it must pass; its writes are made.
func (s *seq) run(ev issues.Event, why string) bool {
	s.in.Event = ev
	p, _ := seqDecide(s.in)
	s.tally.guardRuns++
	if len(p.Violations) > 0 {
		s.tally.failedRuns++
		var msgs []string
		for _, v := range p.Violations {
			msgs = append(msgs, v.Rule+": "+v.Message)
		}
		s.t.Errorf("workflow %d: the guard's run on %s fails after %s:\n  %s\nthe workflow so far:\n  %s", s.w, ev.Name+"/"+ev.Action, why, strings.Join(msgs, "\n  "), strings.Join(s.log, "\n  "))
		return false
	}
	if p.Prune != nil {
		s.tally.prunes++
	}
	if p.Digest != "" {
		s.tally.digests++
	}
	before := s.in.Status
	s.absorb(status.NextInput(s.in, p, ev, s.now))
	if before != nil && s.in.Status != nil && s.in.Status.ID != before.ID {
		s.tally.moves++
	}
	s.log = append(s.log, fmt.Sprintf("guard run on %s/%s: pass (entry %d tokens + next %d = %.0f%% of %d; pruned %v)", ev.Name, ev.Action,
		p.Numbers.ContextTokens-p.Numbers.NextEstimated, p.Numbers.NextEstimated, p.Numbers.ContextRatio*100, p.Numbers.MaxContext, p.Prune != nil))
	s.tally.maxRatio = max(s.tally.maxRatio, p.Numbers.ContextRatio)
	s.numbers = p.Numbers
	s.tick()
	return true
}

// open is the guard's run on the opened issue.
func (s *seq) open() bool {
	return s.run(s.in.Event, "the issue was opened")
}

// step is one agent's report and, when accepted, the guard's runs on it.
// ok is false when a run failed; more is false when the workflow is over.
func (s *seq) step(i int) (ok, more bool) {
	// The figures `context` reports: the guard's last run's, on the issue
	// as it is now.
	n := s.numbers
	agent := n.Agent
	if agent == "" {
		agent = seqAgents[s.rng.IntN(len(seqAgents))]
	}
	rep := handoff.Report{
		Agent: agent, Invocation: fmt.Sprintf("inv-%d-%d", s.w, i), Consumed: int64(300 + s.rng.IntN(2200)),
		Action: "carried out step " + fmt.Sprint(i+1) + " of the rate limiter", Status: "ok", Verdict: "done",
		FilesChanged: int64(s.rng.IntN(6)), KeyStats: fmt.Sprintf(`{"tests": %d}`, s.rng.IntN(300)),
		NextAgent: seqAgents[s.rng.IntN(len(seqAgents))], Result: seqResult(s.rng, 150+s.rng.IntN(350)), Now: s.now,
	}
	// What the entry load leaves available, as `context` tells the agent:
	// the pressure threshold's share of the task's context less the load,
	// and no more than half the budget left after this step.
	avail := int64(s.in.Config.PressureThreshold*float64(n.MaxContext)) - (n.ContextTokens - n.NextEstimated) - 150
	avail = min(avail, (n.BudgetRemaining-rep.Consumed)/2)
	rep.NextEstimate = avail/3 + s.rng.Int64N(max(1, avail-avail/3))
	for try := 0; ; try++ {
		if rep.NextEstimate < 100 || try == 4 {
			rep.NextAgent, rep.NextEstimate = "", 0 // the workflow is done
		}
		s.tally.steps++
		out, err := handoff.Apply(seqNumber, s.in.Issue.Body, s.in.Issue.LabelNames(), rep, handoff.Options{HistoryTail: s.in.Config.HistoryTail, MaxBytes: s.in.Config.MaxCheckpointBytes})
		if err != nil {
			s.t.Fatalf("workflow %d step %d: %v", s.w, i, err)
		}
		comment := handoff.Comment(rep, out)
		j, err := handoff.Judge(s.in, out, comment, 0, seqAgentUser, s.now, seqDecide)
		if err != nil {
			s.t.Fatal(err)
		}
		if !j.Refused() {
			s.tally.accepted++
			return s.write(rep, out, comment)
		}
		s.tally.refusals++
		if rep.NextAgent == "" {
			s.tally.stopped++ // even a last report is refused: a person decides
			return true, false
		}
		rep.NextEstimate /= 2
	}
}

// write makes the report's writes as `report` does (its comment, the body
// compare-and-swap, the labels) and runs the guard on the events they
// cause.
func (s *seq) write(rep handoff.Report, out *handoff.Outcome, comment string) (ok, more bool) {
	var id int64
	for _, c := range append(slices.Clone(s.in.Older), s.in.Recent...) {
		id = max(id, c.ID)
	}
	if s.in.Status != nil {
		id = max(id, s.in.Status.ID)
	}
	posted := issues.Comment{ID: id + 1, Author: seqAgentUser, Body: comment, CreatedAt: s.now, UpdatedAt: s.now}
	s.absorb(s.in.After(guard.Change{Body: &out.Body, Add: out.Add, Remove: out.Remove, Posted: []issues.Comment{posted}}))
	s.log = append(s.log, fmt.Sprintf("%s reported: consumed %d, next %s ~%d, budget %d of %d left", rep.Agent, rep.Consumed, rep.NextAgent, rep.NextEstimate, out.After.Remaining, out.After.Total))
	n := int64(seqNumber)
	edited := issues.Event{Name: "issues", Action: "edited", Number: n, Sender: seqAgentUser, AddedLabels: out.Add, RemovedLabels: out.Remove}
	if !s.run(edited, rep.Agent+"'s accepted report") {
		return false, false
	}
	created := issues.Event{Name: "issue_comment", Action: "created", Number: n, Sender: seqAgentUser, Comment: &posted}
	if !s.run(created, rep.Agent+"'s accepted report (its comment's event)") {
		return false, false
	}
	if rep.NextAgent == "" {
		s.tally.done++
		return true, false
	}
	return true, true
}

// TestTenReportsArchiveInBatches: ten honest reports on an issue opened
// from init's template (size::small, history-tail 3) make one or two
// archives, not one a report once the tail is full: the guard archives
// when the tail grows past twice history-tail (docs/choices.md#pruning),
// and report's prediction agrees with every run.
func TestTenReportsArchiveInBatches(t *testing.T) {
	counter, err := tokens.New(tokens.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	var tally seqTally
	s := newSeq(t, 0, counter, &tally)
	s.in.Issue.Body = regexp.MustCompile(`size::[a-z]+\]`).ReplaceAllString(s.in.Issue.Body, "size::small]")
	s.in.Issue.Labels = []issues.Label{{ID: 1, Name: "cascade::depth-2"}, {ID: 2, Name: "size::small"}}
	if !s.open() {
		t.FailNow()
	}
	for i := range 10 {
		rep := handoff.Report{
			Agent: seqAgents[i%len(seqAgents)], Invocation: fmt.Sprintf("inv-%d", i), Consumed: 600,
			Action: fmt.Sprintf("carried out step %d", i+1), Status: "ok", NextAgent: seqAgents[(i+1)%len(seqAgents)], NextEstimate: 800,
			Result: seqResult(s.rng, 120), Now: s.now,
		}
		out, err := handoff.Apply(seqNumber, s.in.Issue.Body, s.in.Issue.LabelNames(), rep, handoff.Options{HistoryTail: s.in.Config.HistoryTail, MaxBytes: s.in.Config.MaxCheckpointBytes})
		if err != nil {
			t.Fatal(err)
		}
		comment := handoff.Comment(rep, out)
		j, err := handoff.Judge(s.in, out, comment, 0, seqAgentUser, s.now, seqDecide)
		if err != nil || j.Refused() {
			t.Fatalf("report %d refused: %v %v\n%s", i+1, err, j.Plan.Violations, strings.Join(s.log, "\n"))
		}
		if ok, _ := s.write(rep, out, comment); !ok {
			t.FailNow()
		}
	}
	t.Logf("10 reports: %d archive(s), %d guard runs", tally.prunes, tally.guardRuns)
	if tally.prunes < 1 || tally.prunes > 2 {
		t.Errorf("10 reports made %d archives, want 1 or 2", tally.prunes)
	}
}
