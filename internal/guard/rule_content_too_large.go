package guard

import (
	"fmt"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// checkContentTooLarge reports what the run could not read: a body or comment
// over its limit, and timeline entries the forge gave up on. Each sets
// permission::violation until a person shortens the text. Other rules run on
// what was read; an unread comment counts as its length (EntryTokens). An
// outsider's comment is a warning.
func checkContentTooLarge(e *decision) []Violation {
	var out []Violation
	label := e.cfg.Labels.PermissionViolation
	if is := e.in.Issue; is.BodyTooLarge {
		v := at(checkpoint.Pos{Line: 1, Col: 1}, "", "the issue body is at least %s bytes long, %s or more over the %s bytes the guard "+
			"reads of a body: it was not read, so its checkpoint cannot be judged. A person must shorten the body (an agent keeps long "+
			"output in files or comments, not in the body), then remove %s",
			tokens.Format(is.BodyBytes), tokens.Format(max(is.BodyBytes-issues.MaxBodyBytes, 1)), tokens.Format(issues.MaxBodyBytes), label)
		v.Label = label
		out = append(out, v)
	}
	seen := map[int64]bool{}
	for _, cs := range [][]issues.Comment{e.in.Older, e.in.Recent} {
		for _, c := range cs {
			if !c.TooLarge || (c.ID != 0 && seen[c.ID]) {
				continue
			}
			seen[c.ID] = true
			if c.Unread > 0 || c.ID == 0 {
				v := at(checkpoint.Pos{Line: 1, Col: 1}, "", "%d timeline entries were not read: the guard's budget of requests ran out on "+
					"entries too large to read, so what they hold is unknown. A person must delete the comments this finding and the others name "+
					"(or shorten them), then remove %s",
					max(c.Unread, 1), label)
				v.Label = label
				out = append(out, v)
				continue
			}
			path := fmt.Sprintf("comment#%d", c.ID)
			v := at(checkpoint.Pos{Line: 1, Col: 1}, path, "comment %d (posted by %s) is at least %s bytes long, %s or more over the %s "+
				"bytes the guard reads of a comment: it was not read. A person must shorten or delete it, then remove %s",
				c.ID, markdown.Quote(c.Author), tokens.Format(c.BodyBytes), tokens.Format(max(c.BodyBytes-issues.MaxCommentBytes, 1)),
				tokens.Format(issues.MaxCommentBytes), label)
			v.Label = label
			if e.outsider(c) {
				v = asOutsiders([]Violation{v}, c.Author)[0]
			}
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
