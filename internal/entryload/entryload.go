package entryload

import (
	"errors"
	"fmt"

	"github.com/gns-guard/gns-guard/internal/tokens"
)

// Priorities, highest first: lower ones get what higher ones leave.
const (
	P0 = 0 // the issue's task and the checkpoint block (with current_task): never cut
	P1 = 1 // the previous agent's result comment
	P2 = 2 // the other recent comments
	P3 = 3 // the files named by the task
	P4 = 4 // the skill
)

// Kinds of section.
const (
	KindTask       = "task" // the body's task section (TaskSection)
	KindCheckpoint = "checkpoint"
	KindResult     = "result"  // an agent result comment (P1, or P2 when older)
	KindComment    = "comment" // any other comment
	KindFile       = "file"
	KindSkill      = "skill"
)

// Statuses of a section in the load.
const (
	Kept    = "kept"    // whole
	Cut     = "cut"     // a file cut to its first lines
	Dropped = "dropped" // left out: it did not fit
)

// MaxFiles is the protocol's limit.
const MaxFiles = 3

// RecentComments bounds a load's recent comments.
const RecentComments = 3

// Comment's JSON form is also the CLI's comments file format.
type Comment struct {
	ID     int64  `json:"id"`
	Author string `json:"author"`
	Body   string `json:"body"`
	URL    string `json:"html_url,omitempty"`
	// Unread, when not 0, is the length in bytes of a body too large to
	// read (Body is then not the comment's text): Measure weighs the
	// comment at that many tokens at least.
	Unread int `json:"-"`
}

// Doc is a file or skill from the local checkout.
type Doc struct {
	Path string
	Text string
}

// LoadCap is a load's cap and its origin.
type LoadCap struct {
	// Cap is the most tokens the printed load may take.
	Cap int `json:"cap"`
	// Size sets MaxContext and Overhead (docs/contract.md §3); Cap is their
	// difference unless Explicit.
	Size       string `json:"task_size,omitempty"`
	MaxContext int    `json:"max_context,omitempty"`
	Overhead   int    `json:"checkpoint_overhead,omitempty"`
	// Explicit says --cap gave the cap.
	Explicit bool `json:"explicit_cap"`
}

// GuardFigure is the entry load as the guard judges it (Measure), its
// context-tokens output: what `context` loads with no file and no skill —
// the checkpoint (current_task included) and the last three comments that
// are not the guard's own, with their headings and the footer — plus
// next_estimated_tokens.
type GuardFigure struct {
	ContextTokens int64 `json:"context_tokens"`
	// EntryTokens is the load, CommentTokens its comments, CheckpointTokens
	// the action's checkpoint-tokens.
	EntryTokens      int     `json:"entry_tokens"`
	CheckpointTokens int     `json:"checkpoint_tokens"`
	CommentTokens    int     `json:"comment_tokens"`
	NextEstimated    int64   `json:"next_estimated_tokens"`
	TaskSize         string  `json:"task_size"`
	MaxContext       int64   `json:"max_context"`
	ContextRatio     float64 `json:"context_ratio"`
}

// Input is everything a load is assembled from.
type Input struct {
	// Issue is the number; Agent is next_agent.
	Issue int64
	Agent string
	// Task is the issue's task as a person wrote it: the body's task
	// section (TaskSection). It is P0, loaded first and never cut; ""
	// when the body has none.
	Task string
	// TaskNote tells the task's heading where Task came from; "" for none.
	TaskNote string
	// Checkpoint is the block's YAML as in the body: P0, never cut.
	Checkpoint string
	// Comments are the recent comments to load, oldest first, the guard's
	// own already left out (see SelectComments); at most RecentComments
	// of them are used, the newest.
	Comments []Comment
	// Skipped are the guard's own comments, named in the footer.
	Skipped []Skipped
	// Left are the other comments left out (an outsider's, an agent
	// comment by an account that may not speak as its agent), named in the
	// footer one a line.
	Left []Left
	// Gone are accepted results deleted or edited since, named in the
	// footer.
	Gone []Gone
	// Files are at most MaxFiles, in priority order.
	Files []Doc
	// Skill is the skill to load, if any.
	Skill *Doc
	// FullComments loads every agent result comment whole. Without it
	// only the previous agent's result (P1) is whole, when it fits the
	// cap; older results are compressed to their footer's fields.
	FullComments bool
	// Budget is the cap.
	Budget LoadCap
	// Reserve counts the caller's log markers against the cap.
	Reserve int
	// Guard, when set, is the guard's figure, in the footer.
	Guard *GuardFigure
	// Counter counts tokens in the configured encoding.
	Counter *tokens.Counter
}

// Section is one part of the load.
type Section struct {
	Priority int    `json:"priority"`
	Kind     string `json:"kind"`
	Title    string `json:"title"`
	// Source is the file's path or the comment's link.
	Source    string `json:"source,omitempty"`
	CommentID int64  `json:"comment_id,omitempty"`
	Author    string `json:"author,omitempty"`
	Status    string `json:"status"`
	// Tokens is as printed (heading included; 0 dropped); Whole, if whole.
	Tokens int `json:"tokens"`
	Whole  int `json:"whole_tokens"`
	// Compressed says an agent result is shown by its footer's fields;
	// Original is then the tokens of the full comment. ToFit says the
	// previous agent's result was compressed because it does not fit the
	// cap whole (docs/agents.md#context-the-entry-load).
	Compressed bool `json:"compressed,omitempty"`
	Original   int  `json:"original_tokens,omitempty"`
	ToFit      bool `json:"compressed_to_fit,omitempty"`
	// Hidden says what was taken out of the section's text because Gitea
	// does not show it (markdown.Strip): HTML comments, invisible
	// characters and the like, by kind and line; "" when nothing.
	Hidden string `json:"hidden_removed,omitempty"`
	// LinesLeftOut is how many lines a cut left out.
	Lines        int `json:"lines,omitempty"`
	LinesLeftOut int `json:"lines_left_out,omitempty"`
	// Text is the section as printed ("" when dropped).
	Text string `json:"text,omitempty"`

	body  string // raw content (comment body, file text)
	short string // an agent result by its footer's fields
	// wholeCap loads a compressed result whole.
	wholeCap int
	unread   int    // Comment.Unread
	whole    string // rendered whole
	lines    []string
}

// Skipped is the guard's own comment, left out.
type Skipped struct {
	ID   int64  `json:"id"`
	What string `json:"what"` // status, archive, digest or recovery
}

// Left was left out for its author (SelectComments).
type Left struct {
	ID     int64  `json:"id"`
	Author string `json:"author"`
	URL    string `json:"html_url,omitempty"`
	Why    string `json:"why"`
}

// Gone is an accepted result no longer there
// (docs/ledger.md#accepted-results).
type Gone struct {
	ID    int64  `json:"comment_id"`
	Agent string `json:"agent"`
	// What reads "was deleted" or "was edited since".
	What string `json:"what"`
}

// MaxLeftNamed keeps a flood of outsiders' comments from filling the load.
const MaxLeftNamed = 5

// Load is an assembled entry load.
type Load struct {
	Issue int64  `json:"issue"`
	Agent string `json:"agent,omitempty"`
	LoadCap
	// Tokens is Text's exact count, never over Cap - Reserve.
	Tokens int `json:"tokens"`
	// Planned is the all-whole load: the cost check judges it.
	Planned  int       `json:"planned_tokens"`
	Sections []Section `json:"sections"`
	// Dropped and Cut name sections the cap left out or cut.
	Dropped []string     `json:"dropped"`
	Cut     []string     `json:"cut"`
	Skipped []Skipped    `json:"guard_comments_left_out"`
	Left    []Left       `json:"comments_left_out"`
	Gone    []Gone       `json:"results_gone,omitempty"`
	Guard   *GuardFigure `json:"guard,omitempty"`
	Text    string       `json:"text"`
	reserve int          // Input.Reserve
	counter *tokens.Counter
}

// OverCapError says the checkpoint and the task alone do not fit under
// the cap: the issue needs pruning (or a shorter task) before an agent can
// load it.
type OverCapError struct {
	Issue int64
	// Checkpoint is the tokens of the checkpoint block, Task those of the
	// task section; Minimal those of the smallest load (the two with their
	// headings and the footer).
	Checkpoint int
	Task       int
	Minimal    int
	Budget     LoadCap
	Reserve    int
}

func (e *OverCapError) Error() string {
	if e.Task > 0 {
		return fmt.Sprintf("issue #%d: the checkpoint (%s tokens) and the body's task section (%s tokens), which are never cut, take %s "+
			"tokens printed with their headings and the footer, over the cap of %s (%s)",
			e.Issue, tokens.Format(e.Checkpoint), tokens.Format(e.Task), tokens.Format(e.Minimal+e.Reserve), tokens.Format(e.Budget.Cap), capNote(e.Budget))
	}
	return fmt.Sprintf("issue #%d: the checkpoint alone takes %s tokens (%s printed with its heading and the footer), over the cap of %s (%s)",
		e.Issue, tokens.Format(e.Checkpoint), tokens.Format(e.Minimal+e.Reserve), tokens.Format(e.Budget.Cap), capNote(e.Budget))
}

// ErrNoCounter is returned when Input.Counter is nil.
var ErrNoCounter = errors.New("entryload: no token counter")
