package prune

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
)

// Config tunes Plan; DefaultConfig mirrors the action's inputs.
type Config struct {
	// CarryoverRatio is the share of the old remaining budget the new phase
	// keeps: total = floor(max(0, remaining) * CarryoverRatio) + PhaseGrant
	// (0.5). It must lie in [0, 1].
	CarryoverRatio float64
	// PhaseGrant (>= 0) is added to the new phase's budget.
	PhaseGrant int64
	// TailLimit is history kept in the body (3); 0 means the default.
	TailLimit int
	// MaxCommentChars counts runes, as Gitea does (65536); 0 means the
	// default.
	MaxCommentChars int
	// ResetBudget starts a new phase budget (true in DefaultConfig). When
	// false the budget is left as it is: the prune only moves history.
	ResetBudget bool
	// Prev is the link of the issue's last archive part ("" or Genesis:
	// none), which the new archive chains to, and Count the entries
	// archived on the issue so far: the guard keeps both in its ledger.
	Prev  string
	Count int
	// Signer uses ledger-key's Ed25519 key; nil writes unsigned.
	Signer Signer
	// Repo is signed into every part (0: unknown).
	Repo int64
}

// Defaults of Config.
const (
	DefaultCarryoverRatio  = 0.5
	DefaultTailLimit       = checkpoint.DefaultTailLimit
	DefaultMaxCommentChars = 65536
)

// DefaultConfig returns the defaults: carry over half of the remaining
// budget, grant nothing, keep 3 entries, archive comments of at most 65,536
// characters, and reset the budget.
func DefaultConfig() Config {
	return Config{
		CarryoverRatio:  DefaultCarryoverRatio,
		TailLimit:       DefaultTailLimit,
		MaxCommentChars: DefaultMaxCommentChars,
		ResetBudget:     true,
	}
}

func (c Config) tailLimit() int {
	if c.TailLimit == 0 {
		return DefaultTailLimit
	}
	return c.TailLimit
}

func (c Config) maxChars() int {
	if c.MaxCommentChars == 0 {
		return DefaultMaxCommentChars
	}
	return c.MaxCommentChars
}

func (c Config) check() error {
	switch {
	case math.IsNaN(c.CarryoverRatio) || c.CarryoverRatio < 0 || c.CarryoverRatio > 1:
		return fmt.Errorf("prune: the carry-over ratio must lie in [0, 1], not %v", c.CarryoverRatio)
	case c.PhaseGrant < 0:
		return fmt.Errorf("prune: the phase grant must be >= 0, not %d", c.PhaseGrant)
	case c.TailLimit < 0:
		return fmt.Errorf("prune: the history tail limit must be >= 0, not %d", c.TailLimit)
	case c.MaxCommentChars < 0 || c.MaxCommentChars > 0 && c.MaxCommentChars < minCommentChars:
		return fmt.Errorf("prune: archive comments must be allowed at least %d characters, not %d", minCommentChars, c.MaxCommentChars)
	case c.Prev != "" && !isHex64(c.Prev):
		return fmt.Errorf("prune: the previous archive link must be 64 hex digits, not %q", c.Prev)
	case c.Count < 0:
		return fmt.Errorf("prune: the count of archived entries must be >= 0, not %d", c.Count)
	}
	return nil
}

// minCommentChars leaves room for an archive's fixed text.
const minCommentChars = 2048

// Entry is one archived history entry; empty fields are absent.
type Entry struct {
	Agent      string `json:"agent"`
	Action     string `json:"action"`
	Invocation string `json:"invocation,omitempty"`
	Timestamp  string `json:"timestamp,omitempty"`
}

// FromCheckpoint converts decoded checkpoint entries.
func FromCheckpoint(es []checkpoint.Entry) []Entry {
	out := make([]Entry, len(es))
	for i, e := range es {
		out[i] = Entry{Agent: e.Agent.Value, Action: e.Action.Value, Invocation: e.Invocation.Value, Timestamp: e.Timestamp.Value}
	}
	return out
}

// Budget is a phase budget's three figures.
type Budget struct {
	Total     int64 `json:"total"`
	Consumed  int64 `json:"consumed"`
	Remaining int64 `json:"remaining"`
}

// Snapshot is the budget an archive records: the figures at archive time,
// and the new phase budget the prune set (nil when it kept the budget).
type Snapshot struct {
	Budget
	NewPhase *Budget `json:"new_phase,omitempty"`
}

func (s Snapshot) equal(o Snapshot) bool {
	if s.Budget != o.Budget || (s.NewPhase == nil) != (o.NewPhase == nil) {
		return false
	}
	return s.NewPhase == nil || *s.NewPhase == *o.NewPhase
}

// Result is a planned prune: post archives, then write the body.
type Result struct {
	// Body differs from the old only inside the checkpoint block.
	Body string
	// Archives are part 1 first; empty when nothing is removed.
	Archives []string
	// SHA256 is the archived content's hex hash; "" with no archive.
	SHA256 string
	// Parts are the archive parts as ParseArchive reads Archives back.
	// Head is the link of the last part and Count the entries archived on
	// the issue once they are posted (Config.Prev and Count when there is
	// no archive): what the ledger records next.
	Parts []*Archive
	Head  string
	Count int
	// Removed counts Archived (oldest first); Kept stay in history_tail.
	Removed  int
	Archived []Entry
	Kept     []Entry
	// Budget is before the prune; NewBudget is written.
	Budget, NewBudget Budget
	// OldBytes and NewBytes are body sizes.
	OldBytes, NewBytes int
	// Grew means no smaller: the caller writes nothing and warns.
	Grew bool
	// Reason is the caller's own.
	Reason string

	issue  int64
	before []Entry // the checkpoint's entries before the prune
}

// Plan plans the prune of body, whose parse r must be Valid. issue is the
// issue's number (0: the checkpoint's); liveLabels become state.labels; now
// stamps tail entries without a time, and nothing else, so the same input
// gives the same archives. It keeps the last TailLimit entries and the read
// hint.
func Plan(body string, r checkpoint.Result, issue int64, liveLabels []string, now time.Time, cfg Config) (*Result, error) {
	if !r.Valid() {
		return nil, errors.New("prune: the checkpoint is not valid; a body that cannot be trusted is never rewritten")
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cp, block := r.Checkpoint, r.Block()
	if issue == 0 {
		issue = cp.Issue.Value
	}
	limit := cfg.tailLimit()
	res := &Result{
		issue:    issue,
		before:   FromCheckpoint(cp.Entries()),
		OldBytes: len(body),
		Budget:   Budget{cp.Budget.Total.Value, cp.Budget.Consumed.Value, cp.Budget.Remaining.Value},
	}
	res.NewBudget = res.Budget
	res.Head, res.Count = cfg.Prev, cfg.Count
	next, removed := cp.WithTail(limit, now)
	res.Archived = FromCheckpoint(removed)
	res.Removed = len(removed)
	res.Kept = FromCheckpoint(next.Entries())
	snap := Snapshot{Budget: res.Budget}
	if cfg.ResetBudget {
		total, err := carryOver(res.Budget.Remaining, cfg.CarryoverRatio, cfg.PhaseGrant)
		if err != nil {
			return nil, err
		}
		res.NewBudget = Budget{Total: total, Remaining: total}
		nb := res.NewBudget
		snap.NewPhase = &nb
		next = next.WithBudget(total, 0, total)
	}
	labels := slices.Compact(slices.Sorted(slices.Values(liveLabels)))
	next = next.WithLabels(labels)
	text, err := next.Encode()
	if err != nil {
		return nil, fmt.Errorf("prune: %w", err)
	}
	res.Body = checkpoint.RewriteHint(body, block.Replace(text), time.Time{}, len(body)+1)
	res.NewBytes = len(res.Body)
	res.Grew = res.NewBytes >= res.OldBytes
	if err := readBack(res, limit, labels); err != nil {
		return nil, err
	}
	if len(res.Archived) > 0 {
		res.SHA256 = Hash(issue, cp.Phase.Value, snap, res.Archived)
		res.Archives, res.Parts, err = render(archive{issue: issue, phase: cp.Phase.Value, budget: snap, sha: res.SHA256,
			entries: res.Archived, removed: removed,
			prev: cfg.Prev, count: cfg.Count, signer: cfg.Signer, repo: cfg.Repo}, cfg.maxChars())
		if err != nil {
			return nil, err
		}
		last := res.Parts[len(res.Parts)-1]
		res.Head, res.Count = last.Link(), last.Count
	}
	return res, nil
}

// readBack refuses a rewrite that does not read back as planned.
func readBack(res *Result, limit int, labels []string) error {
	r := checkpoint.Parse(res.Body, checkpoint.Options{MaxBytes: len(res.Body) + 1, TailLimit: max(limit, 1)})
	if !r.Valid() {
		msg := "no checkpoint"
		if len(r.Findings) > 0 {
			msg = r.Findings[0].Message
		}
		return fmt.Errorf("prune: the rewritten checkpoint does not read back (%s); nothing is written", msg)
	}
	cp := r.Checkpoint
	got := Budget{cp.Budget.Total.Value, cp.Budget.Consumed.Value, cp.Budget.Remaining.Value}
	var gotLabels []string
	for _, l := range cp.State.Labels.Items {
		gotLabels = append(gotLabels, l.Value)
	}
	if got != res.NewBudget || !slices.Equal(FromCheckpoint(cp.Entries()), res.Kept) || !slices.Equal(gotLabels, labels) || cp.History.Set {
		return errors.New("prune: the rewritten checkpoint does not read back as planned; nothing is written")
	}
	return nil
}

// carryOver computes floor(max(0, remaining) * ratio) + grant exactly: the
// ratio is taken as the decimal it prints as (0.3 is 3/10, not the binary
// fraction just below it).
func carryOver(remaining int64, ratio float64, grant int64) (int64, error) {
	x, ok := new(big.Rat).SetString(strconv.FormatFloat(ratio, 'g', -1, 64))
	if !ok {
		return 0, fmt.Errorf("prune: invalid carry-over ratio %v", ratio)
	}
	x.Mul(x, new(big.Rat).SetInt64(max(remaining, 0)))
	q := new(big.Int).Quo(x.Num(), x.Denom()) // non-negative: truncation is floor
	q.Add(q, big.NewInt(grant))
	if !q.IsInt64() {
		return 0, fmt.Errorf("prune: the new phase budget %s does not fit in a 64-bit integer", q)
	}
	return q.Int64(), nil
}

// Supersedes reports whether a is an archive of this issue posted by a run
// that never wrote its body: every entry it holds is still in the checkpoint
// this prune started from, at the place the archive says. Such an archive
// must be replaced by this one (when its hash differs), or the history
// would hold those entries twice.
func (r *Result) Supersedes(a *Archive) bool {
	if a == nil || a.Issue != r.issue || a.SHA256 == r.SHA256 || len(a.Entries) == 0 || a.FirstSeq < 1 {
		return false
	}
	return StillHeld(r.before, a)
}

// StillHeld reports whether every entry of archive part a is still in a
// checkpoint whose entries are before, at the place the part says: the run
// that posted it never wrote its pruned body.
func StillHeld(before []Entry, a *Archive) bool {
	if a == nil || len(a.Entries) == 0 || a.FirstSeq < 1 {
		return false
	}
	start := a.FirstSeq - 1
	end := start + len(a.Entries)
	// Its run kept a tail, so an entry follows them.
	if end >= len(before) {
		return false
	}
	return slices.Equal(before[start:end], a.Entries)
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
