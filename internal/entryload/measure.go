package entryload

import (
	"math"
	"strings"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// Issue is what the next agent's entry load comes from.
type Issue struct {
	// Number is the issue's; Agent is who loads it.
	Number int64
	Agent  string
	// Body's task section (TaskSection) loads first.
	Body string
	// Checkpoint is the block's YAML as in the body.
	Checkpoint string
	// Recent are the last comments, oldest first, by anyone.
	Recent []issues.Comment
	// Guard is the guard's login: its comments are left out.
	Guard string
	// Authors says whose comments load (SelectComments).
	Authors issues.Authors
	// Missing are the accepted results gone, named in the footer.
	Missing []Gone
	// AcceptedTask, when not "", is the task as the guard accepted it,
	// loaded in place of the body's, which someone who may not changed
	// (docs/ledger.md#the-task); TaskNote says so in its heading.
	AcceptedTask, TaskNote string
}

// Entry is the entry load's input taken from an issue: the body's task
// section, the checkpoint (which holds current_task) and the last RecentComments comments that
// are not the guard's own (SelectComments), the guard's left out named.
// The caller adds the files, the skill and the budget. The guard's
// pressure rule, `context` and `report` all start from it
// (docs/contract.md#6-reading-the-issue-cheaply).
func Entry(iss Issue, counter *tokens.Counter) Input {
	all := make([]Comment, len(iss.Recent))
	for i, c := range iss.Recent {
		all[i] = Comment{ID: c.ID, Author: c.Author, Body: c.Body, URL: c.HTMLURL}
		if c.TooLarge {
			all[i].Unread = int(max(c.BodyBytes, issues.MaxCommentBytes))
		}
	}
	in := Input{Issue: iss.Number, Agent: iss.Agent, Task: TaskSection(iss.Body), Checkpoint: iss.Checkpoint, Counter: counter}
	if iss.AcceptedTask != "" {
		in.Task, in.TaskNote = iss.AcceptedTask, iss.TaskNote
	}
	in.Comments, in.Skipped, in.Left = SelectComments(all, iss.Guard, iss.Number, RecentComments, iss.Authors)
	in.Gone = iss.Missing
	return in
}

// Measure is the entry load as the guard judges it: what `context` prints
// for in with no file or skill, its footer included, plus next, the next
// agent's estimate. An unread comment weighs its length in bytes, erring
// towards pressure. The footer's numbers count themselves, so they are
// settled until the count repeats.
func Measure(in Input, next int64) GuardFigure {
	in.Files, in.Skill, in.Reserve = nil, nil, 0
	g := GuardFigure{NextEstimated: next, TaskSize: in.Budget.Size, MaxContext: int64(in.Budget.MaxContext)}
	if in.Counter == nil || in.Checkpoint == "" {
		return g
	}
	g.CheckpointTokens = in.Counter.Count(in.Checkpoint)
	in.Guard = &g
	a := &assembly{in: &in, target: math.MaxInt32, pinned: -1}
	a.build()
	a.header = header(a.in)
	if in.Budget.Cap > 0 {
		// The previous result, as `context` loads it under the cap.
		a.target = in.Budget.Cap
		a.choosePrevious()
		a.target = math.MaxInt32
	}
	unread := 0
	lines := make([]string, len(a.secs))
	var head strings.Builder
	head.WriteString(a.header)
	for i := range a.secs {
		s := &a.secs[i]
		s.Status, s.Text, s.Tokens = Kept, s.whole, s.Whole
		lines[i] = s.footerLine(Kept, s.Whole, s.Lines)
		head.WriteString("\n" + s.whole)
		if s.Priority != P0 {
			g.CommentTokens += s.Whole
			unread += max(0, s.unread-s.Whole)
		}
	}
	head.WriteString("\n")
	g.CommentTokens += unread
	// The load as render prints it with every section kept; the footer
	// states its total and the figure, which it is part of: settle both.
	text := head.String()
	total := a.count(text) + a.count(footer(a.in, 0, lines))
	for range maxRounds {
		g.EntryTokens = total + unread
		g.ContextTokens = saturatingAdd(int64(g.EntryTokens), next)
		if g.MaxContext > 0 {
			g.ContextRatio = math.Round(float64(g.ContextTokens)/float64(g.MaxContext)*10000) / 10000
		}
		n := a.count(text + footer(a.in, total, lines))
		if n == total {
			break
		}
		total = n
	}
	return g
}

// saturatingAdd adds two non-negative counts, stopping at the largest
// int64: a checkpoint's next_estimated_tokens near that limit must weigh
// as much as it says, never wrap to a negative figure that passes.
func saturatingAdd(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}
