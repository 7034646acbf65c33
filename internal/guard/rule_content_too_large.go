package guard

import (
	"fmt"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// The most the guard reads of one text. Anything longer is not read (the
// forge reads past it without keeping it) and is the violation
// content-too-large: an agent must not be able to make the guard unable
// to run by writing a text it cannot read.
//
// 1 MiB is far beyond any text the protocol calls for: an entry load is at
// most 20,000 tokens (a large task), a checkpoint block at most
// max-checkpoint-bytes (64 KiB), and the guard's own comments at most
// 65,536 characters. Counting the tokens of 1 MiB takes a fraction of a
// second.
const (
	// MaxBodyBytes bounds the issue body, in bytes.
	MaxBodyBytes = 1 << 20
	// MaxCommentBytes bounds one comment's body, in bytes.
	MaxCommentBytes = 1 << 20
)

// EntryTokens is what the comment weighs in the next agent's entry load:
// its tokens, counted; for a comment too large to read, its length in bytes
// and at least MaxCommentBytes (a token holds at least one byte, so that is
// the most it can weigh: the pressure rule errs towards pressure).
func (c Comment) EntryTokens(counter *tokens.Counter) int {
	if c.TooLarge {
		return int(max(c.BodyBytes, MaxCommentBytes))
	}
	return counter.Count(c.Body)
}

// checkContentTooLarge reports what the run could not read: the issue body
// or a comment over its limit, and the timeline entries the forge gave up
// on. Each sets permission::violation, which a person removes once the
// text is shortened or deleted. Every other rule runs on what was read: a
// body not read holds no checkpoint the guard can see (the checkpoint
// rules say so, and nothing writes the body); a comment not read counts in
// the entry load as its length (see EntryTokens).
func checkContentTooLarge(e *eval) []Violation {
	var out []Violation
	label := e.cfg.Labels.PermissionViolation
	if is := e.in.Issue; is.BodyTooLarge {
		v := at(checkpoint.Pos{Line: 1, Col: 1}, "", "the issue body is at least %s bytes long, %s or more over the %s bytes the guard reads of a body: it was not read, so its checkpoint cannot be judged. A person must shorten the body (an agent keeps long output in files or comments, not in the body), then remove %s",
			tokens.Format(is.BodyBytes), tokens.Format(max(is.BodyBytes-MaxBodyBytes, 1)), tokens.Format(MaxBodyBytes), label)
		v.Label = label
		out = append(out, v)
	}
	seen := map[int64]bool{}
	for _, cs := range [][]Comment{e.in.Older, e.in.Recent} {
		for _, c := range cs {
			if !c.TooLarge || (c.ID != 0 && seen[c.ID]) {
				continue
			}
			seen[c.ID] = true
			if c.Unread > 0 || c.ID == 0 {
				v := at(checkpoint.Pos{Line: 1, Col: 1}, "", "%d timeline entries were not read: the guard's budget of requests ran out on entries too large to read, so what they hold is unknown. A person must delete the comments this finding and the others name (or shorten them), then remove %s",
					max(c.Unread, 1), label)
				v.Label = label
				out = append(out, v)
				continue
			}
			path := fmt.Sprintf("comment#%d", c.ID)
			v := at(checkpoint.Pos{Line: 1, Col: 1}, path, "comment %d (posted by %s) is at least %s bytes long, %s or more over the %s bytes the guard reads of a comment: it was not read. A person must shorten or delete it, then remove %s",
				c.ID, quoteShort(c.Author), tokens.Format(c.BodyBytes), tokens.Format(max(c.BodyBytes-MaxCommentBytes, 1)), tokens.Format(MaxCommentBytes), label)
			v.Label = label
			out = append(out, v)
			if c.HTMLURL != "" {
				if e.plan.Links == nil {
					e.plan.Links = map[string]string{}
				}
				e.plan.Links[path] = c.HTMLURL
			}
		}
	}
	return out
}
