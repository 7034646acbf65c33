package guard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// Violation is a finding with its effects on the issue.
type Violation struct {
	finding.Finding
	// Label is the label this violation sets, if any.
	Label string
	// Lock says the violation locks the issue.
	Lock bool
}

// Plan is what was found and every write that follows.
type Plan struct {
	// Governed is false when the guard has no business here.
	Governed bool
	// Skipped says why the run did nothing on purpose.
	Skipped string
	// Violations fail the run; Warnings do not.
	Violations []Violation
	Warnings   []finding.Finding
	// AddLabels are label names to attach; RemoveLabels to detach.
	AddLabels    []string
	RemoveLabels []issues.Label
	// Lock is the lock reason; "" for no lock.
	Lock string
	// Status is the status comment's body; Resolved: all clear, so none is
	// created.
	Status   string
	Resolved bool
	// Recovery is the context-recovery-needed comment to post once, or "".
	Recovery string
	// Fill sets the placeholder number; nil when none or pruned.
	Fill *Fill
	// Hint writes the read hint alone; nil when carried already.
	Hint *HintWrite
	// Prune posts archives, then the body; nil for none.
	Prune *prune.Result
	// Digest is a completion digest comment to post, or "".
	Digest string
	// Ledger is the record to carry: accepted now, or kept, never tampered.
	// Nil on pull requests.
	Ledger *ledger.Record
	// Adopted: no ledger found, so the current state is the baseline.
	Adopted bool
	// RecordTrusted says the record the run found is trusted (it verifies,
	// and matches the anchor, when there is one): the shell may seal it
	// with the anchor although the run did not write it. AnchorLags says it
	// is newer than the anchor (the anchor's last write failed).
	RecordTrusted, AnchorLags bool
	// AskAdmin names a user whose admin right the decision needs; answers go
	// in Input.Admins.
	AskAdmin string
	// AskComments are accepted results the decision must see and did not
	// read (the comment count says comments were deleted, or the event is
	// the edit of one): the shell reads each by id into Input.Fetched and
	// decides again.
	AskComments []int64
	// Missing accepted results are named in the entry load
	// (docs/ledger.md#accepted-results).
	Missing []Missing
	// AskTask: the task changed; the shell reads who did into
	// Input.TaskEdits.
	AskTask *TaskAsk
	// Task is a changed task (nil: unchanged); context loads the accepted
	// one, or refuses.
	Task *TaskVerdict
	// AskWriters says the decision needs the server's list of who can
	// write the issue (the record's is stale, or does not know an
	// author): the shell reads it into Input.Writers and decides again.
	AskWriters bool
	// Authors is who speaks, for entry load, digest and recover.
	Authors issues.Authors
	// Grants are the issue's grants within repository-budget-window that
	// the repository's grant list lacks (a grant this run makes, or one a
	// concurrent run's write dropped): the shell merges them into the list
	// it reads anew, and writes it.
	Grants []ledger.Grant
	// ChainForked says two of the guard's archive parts past the ledger's
	// end continue the chain differently: concurrent runs each archived
	// and one lost its body write, so its part is about to be withdrawn.
	// The record this plan writes cannot count what was archived; the
	// shell reads the issue again while it has attempts left.
	ChainForked bool
	// Numbers are the figures reported in outputs, summary and metrics.
	Numbers Numbers
	// Links maps key paths to web pages, where known.
	Links map[string]string
	// Opened is the body's content version a first record counts as the
	// issue's opening once this run's own writes are made (its fill or
	// prune of a body as opened): a run cut short after its body write
	// and before its ledger finds its own write no edit
	// (docs/ledger.md#no-ledger-yet).
	Opened int
}

// Numbers are the measured figures of one run.
type Numbers struct {
	Depth         int64 `json:"depth"`
	MaxDepth      int   `json:"max_depth"` // Unlimited (-1) for n; 0 with no limit known
	MaxDepthKnown bool  `json:"-"`
	// Known is false when the figures are unknown, not 0.
	Known           bool  `json:"-"`
	BudgetTotal     int64 `json:"budget_total"`
	BudgetConsumed  int64 `json:"budget_consumed"`
	BudgetRemaining int64 `json:"budget_remaining"`
	// EarlierPhases plus BudgetConsumed is Lifetime
	// (docs/pruning.md#lifetime-spend).
	EarlierPhases    int64 `json:"earlier_phases_consumed"`
	Lifetime         int64 `json:"lifetime_consumed"`
	CheckpointTokens int   `json:"checkpoint_tokens"`
	// EntryTokens is entryload.Measure's total; ContextTokens adds
	// NextEstimated.
	EntryTokens   int     `json:"entry_tokens"`
	CommentTokens int     `json:"comment_tokens"`
	NextEstimated int64   `json:"next_estimated_tokens"`
	ContextTokens int64   `json:"context_tokens"`
	MaxContext    int64   `json:"max_context"`
	ContextRatio  float64 `json:"context_ratio"`
	TaskSize      string  `json:"task_size"`
	Entries       int     `json:"checkpoint_entries"`
	Agent         string  `json:"agent"`
	// Metered sums valid receipts, MeteredReported the reported rises,
	// MeteredResults counts them.
	Metered         int64 `json:"metered_tokens,omitempty"`
	MeteredReported int64 `json:"metered_reported_tokens,omitempty"`
	MeteredResults  int   `json:"metered_results,omitempty"`
}

// Failed reports whether the plan fails the run.
func (p *Plan) Failed(cfg config.Config) bool {
	return len(p.Violations) > 0 && cfg.FailOn != "never"
}

// Waiting counts the violations that only a person ends: the budget is
// exhausted (or over the cap) and budget::exhausted waits for an approver.
// A run failing for these alone waits, it did not break.
func (p *Plan) Waiting() int {
	n := 0
	for _, v := range p.Violations {
		if v.Rule == RuleBudgetExhausted || v.Rule == RuleBudgetOverCap || v.Rule == RuleRepositoryBudget {
			n++
		}
	}
	return n
}

// MaxTableRows bounds the finding rows of a comment or summary: a hostile
// checkpoint can hold thousands of unknown keys, and the status comment is
// among the last comments the next agent loads. The log and the violations
// output keep more (MaxListed).
const MaxTableRows = 50

// MaxListed bounds the findings listed in the log and output.
const MaxListed = 1000

// Findings sorts all findings, posture last so the issue's own come first.
func (p *Plan) Findings() []finding.Finding {
	fs := make([]finding.Finding, 0, len(p.Violations)+len(p.Warnings))
	for _, v := range p.Violations {
		fs = append(fs, v.Finding)
	}
	fs = append(fs, p.Warnings...)
	fs = finding.Sort(fs)
	slices.SortStableFunc(fs, func(a, b finding.Finding) int {
		return boolRank(a.Rule == RulePosture) - boolRank(b.Rule == RulePosture)
	})
	return fs
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Write is one write to the issue, as the plan makes it. It is the one
// description of a write: `check` prints it as planned, a dry run logs it
// as planned, and a real run logs it as done.
type Write struct {
	Kind WriteKind
	// Detail completes the sentence: labels, part and size, lock reason,
	// comment id.
	Detail string
	// Part is 1-based, for PostArchive; Label is for RemoveLabel.
	Part  int
	Label issues.Label
}

// WriteKind is what a write does.
type WriteKind int

// The writes, in run order: archive first, status comment last.
const (
	PostArchive WriteKind = iota
	PatchBody
	SetIssue
	WriteHint
	AddLabels
	RemoveLabel
	Lock
	PostRecovery
	PostDigest
	PostStatus
	UpdateStatus
)

var writeVerbs = [...]struct{ planned, done string }{
	PostArchive:  {"post archive", "posted archive"},
	PatchBody:    {"patch the body", "patched the body"},
	SetIssue:     {"set checkpoint.issue", "set checkpoint.issue"},
	WriteHint:    {"write the read hint", "wrote the read hint"},
	AddLabels:    {"add labels", "added labels"},
	RemoveLabel:  {"remove label", "removed label"},
	Lock:         {"lock the issue", "locked the issue"},
	PostRecovery: {"post the context-recovery-needed comment", "posted the context-recovery-needed comment"},
	PostDigest:   {"post a completion digest", "posted a completion digest"},
	PostStatus:   {"post the status comment", "posted the status comment"},
	UpdateStatus: {"update the status comment", "updated the status comment"},
}

// Planned says the write to do: "add labels: budget::exhausted".
func (w Write) Planned() string { return writeVerbs[w.Kind].planned + w.Detail }

// Done says the write as made; fact is the answer ("comment 17").
func (w Write) Done(fact string) string {
	s := writeVerbs[w.Kind].done + w.Detail
	if fact != "" {
		s += " (" + fact + ")"
	}
	return s
}

// Writes are in order, without the status comment (StatusWrite).
func (p *Plan) Writes() []Write {
	var ws []Write
	if !p.Governed {
		return nil
	}
	if pr := p.Prune; pr != nil {
		for i, a := range pr.Archives {
			ws = append(ws, ArchiveWrite(i+1, len(pr.Archives), a))
		}
		ws = append(ws, PatchWrite(pr))
	} else if p.Fill != nil {
		ws = append(ws, p.Fill.Write())
	} else if p.Hint != nil {
		ws = append(ws, p.Hint.Write())
	}
	if len(p.AddLabels) > 0 {
		ws = append(ws, LabelsWrite(p.AddLabels))
	}
	for _, l := range p.RemoveLabels {
		ws = append(ws, RemoveLabelWrite(l))
	}
	if p.Lock != "" {
		ws = append(ws, LockWrite(p.Lock))
	}
	if p.Recovery != "" {
		ws = append(ws, Write{Kind: PostRecovery})
	}
	if p.Digest != "" {
		ws = append(ws, Write{Kind: PostDigest})
	}
	return ws
}

// ArchiveWrite is the write that posts archive part of parts.
func ArchiveWrite(part, parts int, body string) Write {
	return Write{Kind: PostArchive, Detail: fmt.Sprintf(" part %d/%d (%d characters)", part, parts, len([]rune(body))), Part: part}
}

// PatchWrite is the compare-and-swap write of a pruned body.
func PatchWrite(pr *prune.Result) Write {
	return Write{Kind: PatchBody, Detail: fmt.Sprintf(": %d entries archived, %d → %d bytes (%s)", pr.Removed, pr.OldBytes, pr.NewBytes, pr.Reason)}
}

// LabelsWrite attaches labels.
func LabelsWrite(names []string) Write {
	return Write{Kind: AddLabels, Detail: ": " + strings.Join(names, ", ")}
}

// RemoveLabelWrite detaches one label.
func RemoveLabelWrite(l issues.Label) Write {
	return Write{Kind: RemoveLabel, Detail: ": " + l.Name, Label: l}
}

// LockWrite locks the issue with reason.
func LockWrite(reason string) Write { return Write{Kind: Lock, Detail: ": " + reason} }

// StatusWrite is none when existing says body already, or all is clear
// without a comment.
func StatusWrite(existing *issues.Comment, body string, resolved bool) (Write, bool) {
	switch {
	case existing != nil && strings.TrimSpace(existing.Body) == strings.TrimSpace(body):
		return Write{}, false
	case existing != nil:
		return Write{Kind: UpdateStatus, Detail: fmt.Sprintf(" %d", existing.ID)}, true
	case resolved:
		return Write{}, false
	}
	return Write{Kind: PostStatus}, true
}

// BudgetSteps are the shares of a budget, in percent, at which the meter
// and the status comment warn that it runs out: an approver raises it in
// time, and no agent is stopped mid-task.
var BudgetSteps = []int64{95, 90, 80}

// BudgetStep is the highest BudgetSteps reached, if any.
func BudgetStep(used, total int64) (int64, bool) {
	if total <= 0 {
		return 0, false
	}
	pct := used * 100 / total
	for _, step := range BudgetSteps {
		if pct >= step {
			return step, true
		}
	}
	return 0, false
}
