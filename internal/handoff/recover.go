package handoff

import (
	"errors"
	"time"

	"github.com/gns-guard/gns-guard/internal/agentcomment"
	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// Baseline is the last trusted state: the ledger, or an archive's budget.
type Baseline struct {
	// Source is e.g. "the guard's ledger in its status comment 12 (signed)".
	Source string
	// Version and Issue default to 2 and the issue's number.
	Version, Issue int64
	Phase          string
	Total          int64
	Consumed       int64
	Remaining      int64
	// Written is when the state was recorded: agent comments posted after
	// it are the events since, unless the footers' budgets show where the
	// state stands among them (see Reconstruct).
	Written time.Time
}

// Event is one agent comment with a readable GNS_EVENT footer.
type Event struct {
	CommentID int64
	Author    string
	Created   time.Time
	Footer    agentcomment.Footer
}

// Field is one proposed key, its value as written, and its source.
type Field struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// Proposal is a rebuilt checkpoint.
type Proposal struct {
	// YAML is ready to paste between ```yaml fences.
	YAML string `json:"yaml"`
	// Fields explain every key, in the block's order.
	Fields []Field `json:"fields"`
	// Since are the ids of footers added to the baseline, in order.
	Since []int64 `json:"since"`
	// Notes are what the reader must check: gaps in the footers' budget
	// chain, values that could not be recovered, a history_tail longer
	// than its limit (the guard archives the overflow on its next run).
	Notes []string `json:"notes,omitempty"`
}

// RecoverInput is everything Reconstruct reads.
type RecoverInput struct {
	Issue    int64
	Baseline Baseline
	// Events are the agent comments with readable footers, oldest first:
	// all of them, not only those since the baseline (their footers are
	// also how the history entries the body lost are found again).
	Events []Event
	// Broken is the partly decoded invalid checkpoint, or nil.
	Broken *checkpoint.Checkpoint
	// Archived are the entries the guard's archives already hold, oldest
	// first (prune.Rebuild's): recovery does not write them again. Entries
	// with invocations match on agent and invocation, others on agent,
	// action and timestamp. Nil when the issue has no archive.
	Archived []prune.Entry
	// Labels are the issue's live labels.
	Labels []string
	// TailLimit is how many entries history_tail holds (3). The proposal
	// keeps every known entry that is not archived, even past the limit:
	// the guard prunes the overflow into its archive chain on its next run.
	TailLimit int
	// Created stands in for a missing created_at or unreadable entry
	// timestamp.
	Created time.Time
}

// Reconstruct rebuilds a checkpoint from the baseline and the agent footers
// since: after the last footer whose remaining matches the baseline's, else
// after its time. Each adds its consumed. history_tail holds every known
// entry the archives lack, even past TailLimit: recovery drops none, and
// the guard archives the overflow. The result is always a valid checkpoint.
func Reconstruct(in RecoverInput) (*Proposal, error) {
	base := in.Baseline
	since, how := eventsSince(base, in.Events)
	budget := chainBudget(base, since)
	br := in.Broken
	if br == nil {
		br = &checkpoint.Checkpoint{} // nothing set
	}
	last, lastSince := newest(in.Events), newest(since)
	labels := liveLabels(in.Labels)
	limit := max(in.TailLimit, 1)
	history := historyEntries(br, in.Events, in.Archived, in.Created)

	b := newBuilder()
	b.note(budget.notes...)
	b.addInt("version", pick[int64]{Value: base.Version, Source: base.Source})
	b.addInt("issue", pick[int64]{Value: base.Issue, Source: base.Source})
	b.addString("phase", phaseOf(base, lastSince))
	depth := depthOf(last, br)
	b.addInt("depth", depth)
	agent, invocation := lastAgentOf(last, br)
	b.addString("last_agent", agent)
	b.addString("last_invocation", invocation)
	b.addBudget(base, budget, how)
	b.addState(labels, assigneeOf(br, last))
	b.addHistory(history, limit)
	if task, ok := currentTaskOf(br); ok {
		b.addString("current_task", task)
	}
	if chain, ok := agentChainOf(br, depth.Value); ok {
		b.addList("agent_chain", chain)
	}
	b.addString("next_agent", nextAgentOf(last, br))
	b.addInt("next_estimated_tokens", nextEstimateOf(last, br))
	b.addQuoted("created_at", createdAtOf(br, in.Created))

	text, err := render(b.doc, in.Issue, max(limit, len(history.entries)), labels)
	if err != nil {
		return nil, err
	}
	return &Proposal{YAML: text, Fields: b.fields, Since: budget.ids, Notes: b.notes}, nil
}

// ErrNoBaseline says recovery found no state it can trust.
var ErrNoBaseline = errors.New("no trusted state: the guard's status comment holds no ledger that verifies, and no archive of the guard's was found")
