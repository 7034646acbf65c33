package guard

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/entryload"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// Input is all Decide reads.
type Input struct {
	Config config.Config
	Issue  issues.Issue
	Event  issues.Event
	// Recent are oldest first: at least three, and enough to find the
	// guard's own.
	Recent []issues.Comment
	// Self is the guard's login: only its markers are trusted.
	Self string
	// Repo is OWNER/NAME, when known, for the commands comments name.
	Repo string
	// Status holds the ledger; nil when none was found.
	Status *issues.Comment
	// Record is the ledger record of Status as the shell read and verified
	// it (nil: not read yet). A decision takes it instead of verifying the
	// record again, as long as it is of Status as it is now.
	Record *ledger.Verified
	// Older were read past Recent seeking the status comment; not in the
	// entry load.
	Older []issues.Comment
	// LabelEvents are the timeline's label changes, oldest first.
	LabelEvents []issues.LabelEvent
	// Unreached: no status comment, and the first entry was out of reach, so
	// a ledger may be buried.
	Unreached bool
	// Anchor, as far as the run knows it: docs/ledger.md.
	Anchor ledger.AnchorState
	// Hint, as far as the run knows it: docs/ledger.md#the-read-hint.
	Hint Hint
	// Grants, as far as the run knows it:
	// docs/ledger.md#the-repository-budget.
	Grants ledger.GrantState
	// Admins answers Plan.AskAdmin: user to repository admin or not.
	Admins map[string]bool
	// PullFiles are the paths a pull request changes (pull_request events).
	PullFiles []string
	// PullSettings is why a pull request's settings fail to load
	// (file:line:col: key: reason); "" if fine.
	PullSettings string
	// Now is the time of the run.
	Now time.Time
	// Counter counts tokens in the configured encoding.
	Counter *tokens.Counter
	// Done closes at the deadline (checkpoint.ParseTimeout); Decide reads no
	// clock.
	Done <-chan struct{}
	// ConfigStamp is recorded in the ledger; nil records none.
	ConfigStamp *ledger.ConfigStamp
	// Posture is reported and recorded; nil: not judged, no warning.
	Posture *ledger.PostureStamp
	// Pins, as far as the run knows it: docs/ledger.md#pinned-labels.
	Pins ledger.PinState
	// TaskEdits answers Plan.AskTask; nil: not asked.
	TaskEdits *TaskEdits
	// Fetched answers Plan.AskComments; a nil comment is gone.
	Fetched map[int64]*issues.Comment
	// Writers answers Plan.AskWriters; nil: not asked.
	Writers *WriterList
	// Records says the shell writes the record this decision plans (the
	// action's run, not a read-only sweep): a first record then asks for
	// the writers list, so that a writer's first comment costs nothing.
	Records bool
	// Meter is metered spend; nil: not asked (only the action asks, once).
	Meter *MeterRead
	// LabelsUnknown (offline, state.labels unreadable) skips the rules that
	// need labels.
	LabelsUnknown bool
}

// OnPull reports whether the decision is about a pull request: the issue
// as read is one, or the event came from one. Every event on a pull
// request (its own, a label, an edit, a comment, a review) judges its
// protected paths, and nothing else (docs/contract.md#4-rules).
func (in Input) OnPull() bool { return in.Issue.IsPull || in.Event.IsPull }

// decision is one decision in progress.
type decision struct {
	in     Input
	cfg    config.Config
	labels []string
	parsed checkpoint.Result
	cp     *checkpoint.Checkpoint // nil unless the checkpoint is valid
	plan   *Plan
	trust  trust   // the ledger and the approvals of this run
	pins   pinning // the labels judged against the pins
	chain  *archiveHead
	// planned is the planned archive's hash, once known.
	planned string
	// access is who can write the issue; nil: no stamp.
	access *ledger.AccessStamp
}

// Decide plans every write, purely: no request, clock or environment.
func Decide(in Input) *Plan {
	e := &decision{in: in, cfg: in.Config, labels: in.Issue.LabelNames(), plan: &Plan{}}
	e.trust.approved = map[string]string{}
	governed := hasGovernedLabel(e.labels)
	e.judgePins()
	if in.OnPull() {
		e.plan.Governed = true
		e.judgePull()
		e.run(true)
		e.plan.Violations = append(e.plan.Violations, e.pinFindings()...)
		e.judgePosture()
		e.labelWrites()
		e.recordPull()
		e.report()
		return e.plan
	}
	e.parsed = checkpoint.Parse(in.Issue.Body, checkpoint.Options{
		Issue:     in.Issue.Number,
		MaxBytes:  e.cfg.MaxCheckpointBytes,
		TailLimit: e.cfg.HistoryTail,
		Done:      in.Done,
	})
	if len(e.parsed.Blocks) == 0 && !governed && !in.Issue.BodyTooLarge && !hasAnchor(in) {
		e.plan.Skipped = "the issue has no checkpoint block and no cascade:: or budget:: label: it is not governed"
		return e.plan
	}
	e.plan.Governed = true
	e.readRecord()
	e.judgeAuthors()
	e.checkResults()
	e.checkTask()
	e.fillPlaceholder()
	if e.parsed.Valid() {
		e.cp = e.parsed.Checkpoint
		e.judgeFork()
	}
	e.judgeLabels()
	e.measure()
	e.judgeCheckpoint()
	e.planPrune()
	e.run(false)
	e.judgePosture()
	e.maintain()
	e.labelWrites()
	e.recordLedger()
	e.report()
	return e.plan
}

// maintain plans the recovery request for an unreadable checkpoint, and the
// completion digest.
func (e *decision) maintain() {
	if e.cp == nil {
		e.planRecovery()
	}
	e.planDigest()
}

// report finishes the plan: whether it reports all clear.
func (e *decision) report() {
	e.plan.Resolved = len(e.plan.Violations) == 0
}

// IsGoverned reports whether the guard has business with an issue: it has a
// checkpoint block, a cascade:: or budget:: label, or a body too large to
// read (which may hold a checkpoint). It is cheap, so the shell reads
// nothing more of an issue that is not governed.
func IsGoverned(issue issues.Issue, cfg config.Config) bool {
	return hasGovernedLabel(issue.LabelNames()) || issue.BodyTooLarge || len(checkpoint.Find(issue.Body, cfg.MaxCheckpointBytes)) > 0
}

func hasGovernedLabel(labels []string) bool {
	for _, l := range labels {
		if strings.HasPrefix(l, "cascade::") || strings.HasPrefix(l, "budget::") {
			return true
		}
	}
	return false
}

func (e *decision) hasLabel(name string) bool { return slices.Contains(e.labels, name) }

// own reports whether c is the guard's and carries marker.
func (e *decision) own(c issues.Comment, marker string) bool {
	return c.Author == e.in.Self && e.in.Self != "" && strings.Contains(c.Body, marker)
}

// labelWrites turns the violations' labels into label writes: add what a
// violation sets and is missing, and the approval labels someone removed
// without the right to; remove what the guard set and no violation holds
// any more (except the labels only a person may remove), and the relaxing
// labels added without the right to.
func (e *decision) labelWrites() {
	want := map[string]bool{}
	for _, v := range e.plan.Violations {
		if v.Label != "" {
			want[v.Label] = true
		}
		if v.Lock && e.plan.Lock == "" && !e.in.Issue.Locked {
			e.plan.Lock = lockReason(v.Rule)
		}
	}
	for _, r := range e.trust.restore {
		want[r.label] = true
	}
	live := e.in.Issue.LabelNames()
	for _, name := range sortedKeys(want) {
		if !slices.Contains(live, name) {
			e.plan.AddLabels = append(e.plan.AddLabels, name)
		}
	}
	n := e.cfg.Labels
	e.plan.RemoveLabels = append(e.plan.RemoveLabels, e.pins.forged...)
	for _, l := range e.in.Issue.Labels {
		removable := l.Name == n.DepthExceeded || l.Name == n.PressureHigh
		relaxed := slices.ContainsFunc(e.trust.relaxed, func(r removal) bool { return r.label == l.Name })
		if relaxed || (removable && !want[l.Name] && e.plan.Governed && !e.partial(l.Name)) {
			e.plan.RemoveLabels = append(e.plan.RemoveLabels, l)
		}
	}
}

// partial: the label's rule was unjudged (unreadable checkpoint), so the
// label stays.
func (e *decision) partial(label string) bool {
	if e.in.OnPull() {
		return true
	}
	return e.cp == nil && (label == e.cfg.Labels.DepthExceeded || label == e.cfg.Labels.PressureHigh)
}

func lockReason(rule string) string {
	switch rule {
	case RuleDepthExceeded:
		return "gns-guard: cascade depth exceeded"
	case RuleAgentNotAllowed:
		return "gns-guard: agent not allowed"
	}
	return "gns-guard: " + rule
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// measure computes the numbers every rule and report uses.
func (e *decision) measure() {
	n := &e.plan.Numbers
	n.MaxDepth, n.MaxDepthKnown = e.maxDepth()
	cp := e.cp
	if cp == nil {
		return
	}
	n.Known = true
	n.Depth = cp.Depth.Value
	n.BudgetTotal = cp.Budget.Total.Value
	n.BudgetConsumed = cp.Budget.Consumed.Value
	n.BudgetRemaining = cp.Budget.Remaining.Value
	n.NextEstimated = cp.NextEstimatedTokens.Value
	n.Entries = len(cp.Entries())
	n.Agent = cp.NextAgent.Value
	if n.Agent == "" {
		n.Agent = cp.LastAgent.Value
	}
	size := e.taskSize()
	n.TaskSize = size.Name
	n.MaxContext = size.MaxContext
	e.measureContext(e.parsed.Block().Text())
	e.measureSpent()
}

// measureContext: entryload.Measure, what `context` loads, plus
// next_estimated_tokens.
func (e *decision) measureContext(block string) {
	n := &e.plan.Numbers
	if e.in.Counter == nil {
		return
	}
	size := e.taskSize()
	task, note := e.plan.EntryTask()
	in := entryload.Entry(entryload.Issue{Number: e.in.Issue.Number, Agent: n.Agent, Body: e.in.Issue.Body, Checkpoint: block,
		Recent: e.in.Recent, Guard: e.in.Self,
		Authors: e.plan.Authors, Missing: e.plan.MissingResults(), AcceptedTask: task, TaskNote: note}, e.in.Counter)
	in.Budget = entryload.LoadCap{Cap: int(size.Available()), Size: size.Name, MaxContext: int(size.MaxContext), Overhead: int(size.Overhead)}
	g := entryload.Measure(in, n.NextEstimated)
	n.CheckpointTokens, n.EntryTokens, n.CommentTokens = g.CheckpointTokens, g.EntryTokens, g.CommentTokens
	n.ContextTokens, n.ContextRatio = g.ContextTokens, g.ContextRatio
}

// taskSize comes from labels, else from the estimate.
func (e *decision) taskSize() issues.TaskSize {
	if s, ok := issues.SizeFromLabels(e.labels, e.cfg.Labels.SizePrefix); ok {
		return s
	}
	var est int64
	if e.cp != nil {
		est = e.cp.NextEstimatedTokens.Value
	}
	s, _ := issues.SizeFromEstimate(est)
	return s
}

// maxDepth is the labels' cascade limit, else the default input.
func (e *decision) maxDepth() (limit int, ok bool) {
	limits := e.cascadeLimits()
	if len(limits) > 0 {
		return limits[0].limit, true
	}
	if e.cfg.DefaultMaxDepth != nil {
		return *e.cfg.DefaultMaxDepth, true
	}
	return 0, false
}

type cascadeLabel struct {
	name  string // the whole label
	text  string // what follows the prefix: "2" or "n"
	limit int
}

// cascadeLimits returns the effective cascade::depth-N and -n labels.
func (e *decision) cascadeLimits() []cascadeLabel { return cascadeLabels(e.labels, e.cfg.Labels) }

// cascadeLabels returns the cascade::depth-N and -n labels among labels.
func cascadeLabels(labels []string, n config.LabelNames) []cascadeLabel {
	var out []cascadeLabel
	for _, l := range labels {
		rest, ok := strings.CutPrefix(l, n.CascadePrefix)
		if !ok || l == n.DepthExceeded {
			continue
		}
		if rest == "n" || rest == "N" {
			out = append(out, cascadeLabel{l, rest, config.Unlimited})
			continue
		}
		var k int
		if _, err := fmt.Sscanf(rest, "%d", &k); err == nil && fmt.Sprint(k) == rest && k >= 0 {
			out = append(out, cascadeLabel{l, rest, k})
		}
	}
	return out
}
