package checkpoint

import "gopkg.in/yaml.v3"

// Rule ids of the findings this package reports.
const (
	RuleInvalid      = "checkpoint-invalid"
	RuleAmbiguous    = "checkpoint-ambiguous"
	RuleMissing      = "checkpoint-missing"
	RuleTooLarge     = "checkpoint-too-large"
	RuleTailTooLong  = "history-tail-length"
	DefaultMaxBytes  = 64 << 10
	DefaultTailLimit = 3
)

// TailMost is the most entries history_tail may hold for a history-tail of
// limit: twice limit. The guard archives all but the last limit entries
// once a report takes the tail past it, so that archives come in batches
// (docs/choices.md#pruning).
func TailMost(limit int) int {
	if limit <= 0 {
		limit = DefaultTailLimit
	}
	return 2 * limit
}

// Pos is in the issue body, 1-based.
type Pos struct{ Line, Col int }

// Int is an integer value with its position. Set is false when the key is
// absent or its value is not an integer.
type Int struct {
	Value int64
	Pos   Pos
	Set   bool
}

// String is a string value with its position. Set is false when the key is
// absent or its value is not a string (null counts as "" where allowed).
type String struct {
	Value string
	Pos   Pos
	Set   bool
}

// Checkpoint is a decoded schema v2 checkpoint.
type Checkpoint struct {
	Pos                 Pos // the `checkpoint` key
	Version             Int
	Issue               Int
	Phase               String
	Depth               Int
	LastAgent           String
	LastInvocation      String
	Budget              Budget
	State               State
	History             List[Entry]
	HistoryTail         List[Entry]
	CurrentTask         String
	AgentChain          List[String]
	NextAgent           String
	NextEstimatedTokens Int
	CreatedAt           String

	doc *yaml.Node // the decoded document, for rewriting
}

// List is an optional list; Set is false when absent.
type List[T any] struct {
	Items []T
	Pos   Pos
	Set   bool
}

// Budget is the token budget of the current phase.
type Budget struct {
	Pos                        Pos
	Set                        bool
	Total, Consumed, Remaining Int
}

// State mirrors the issue state the agents see.
type State struct {
	Pos       Pos
	Set       bool
	Labels    List[String]
	Assignee  String
	Milestone String // the raw scalar, integer or string
}

// Entry is one history or history_tail entry.
type Entry struct {
	Pos        Pos
	Agent      String
	Action     String
	Invocation String
	Timestamp  String
}

// Entries are history_tail when present, else history.
func (c *Checkpoint) Entries() []Entry {
	if c.HistoryTail.Set {
		return c.HistoryTail.Items
	}
	return c.History.Items
}
