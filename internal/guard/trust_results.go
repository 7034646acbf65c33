package guard

import (
	"fmt"
	"slices"

	"github.com/gns-guard/gns-guard/internal/agentcomment"
	"github.com/gns-guard/gns-guard/internal/entryload"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// Accepted results do not vanish (docs/ledger.md#accepted-results): the record
// keeps each one's id and digest since the last archive. A changed one is an
// edit, a missing one a deletion. Older ones are asked of the server
// (Plan.AskComments) when the comment count drops or the event edits one.

// Missing is an accepted result deleted or edited since.
type Missing struct {
	ID     int64  `json:"comment_id"`
	Agent  string `json:"agent"`
	Edited bool   `json:"edited"`
}

// What says what became of it.
func (m Missing) What() string {
	if m.Edited {
		return "was edited since"
	}
	return "was deleted"
}

// MissingResults says the accepted results gone, for the entry load.
func (p *Plan) MissingResults() []entryload.Gone {
	var out []entryload.Gone
	for _, m := range p.Missing {
		out = append(out, entryload.Gone{ID: m.ID, Agent: m.Agent, What: m.What()})
	}
	return out
}

// checkResults finds gone accepted results (Plan.Missing), asking for unseen
// ones when needed.
func (e *decision) checkResults() {
	l := e.trust.ledger
	if l == nil || len(l.Results) == 0 {
		return
	}
	read := e.liveComments()
	// The last comments are contiguous; older ones read may have gaps.
	oldest := int64(0)
	for _, c := range e.in.Recent {
		if c.ID != 0 && (oldest == 0 || c.ID < oldest) {
			oldest = c.ID
		}
	}
	deleted := e.deletedSince(l.Seen, read) > 0
	for _, r := range l.Results {
		c, known := e.resultComment(read, r.ID)
		switch {
		case known && c == nil:
			e.plan.Missing = append(e.plan.Missing, Missing{ID: r.ID, Agent: r.Agent})
		case known && !c.TooLarge && ledger.ResultDigest(c.Body) != r.Digest:
			e.plan.Missing = append(e.plan.Missing, Missing{ID: r.ID, Agent: r.Agent, Edited: true})
		case !known && oldest != 0 && r.ID > oldest:
			e.plan.Missing = append(e.plan.Missing, Missing{ID: r.ID, Agent: r.Agent})
		case !known && (deleted || e.editedNow(r.ID)):
			e.plan.AskComments = append(e.plan.AskComments, r.ID)
		}
	}
}

// resultComment is read or fetched (nil: gone); known is false if neither.
func (e *decision) resultComment(read []issues.Comment, id int64) (c *issues.Comment, known bool) {
	if i := slices.IndexFunc(read, func(c issues.Comment) bool { return c.ID == id }); i >= 0 {
		return &read[i], true
	}
	f, asked := e.in.Fetched[id]
	return f, asked
}

// liveComments are read from the server, oldest first, never the payload's
// copy.
func (e *decision) liveComments() []issues.Comment {
	return append(slices.Clone(e.in.Older), e.in.Recent...)
}

// deletedSince counts the comments deleted since seen, at least: the
// issue's comment count is below what seen's count and the newer comments
// read make, less the status comment the run that wrote the record moved
// (deleting the old one). 0 when the comments read do not reach back to
// seen: the newer ones cannot all be counted.
func (e *decision) deletedSince(seen *ledger.CommentsSeen, read []issues.Comment) int {
	if seen == nil || !slices.ContainsFunc(read, func(c issues.Comment) bool { return c.ID != 0 && c.ID <= seen.Last }) {
		return 0
	}
	newer := 0
	for _, c := range read {
		if c.ID > seen.Last {
			newer++
		}
	}
	if st := e.in.Status; st != nil && st.ID > seen.Last {
		newer--
	}
	return seen.Count + newer - e.in.Issue.Comments
}

// editedNow: the event edits comment id.
func (e *decision) editedNow(id int64) bool {
	ev := e.in.Event
	return ev.Name == "issue_comment" && ev.Action == "edited" && ev.Comment != nil && ev.Comment.ID == id
}

// resultsFindings are the tampering findings of the accepted results gone.
func (e *decision) resultsFindings() []Violation {
	pv := e.cfg.Labels.PermissionViolation
	var out []Violation
	for _, m := range e.plan.Missing {
		path := fmt.Sprintf("comment#%d", m.ID)
		v := at(e.blockPos(), path, "the result of agent %s in comment %d, which the guard accepted, %s: an accepted result may not "+
			"vanish or change. Post it again as it was (its link in an archive or digest, or the agent's own copy), or an approver checks "+
			"the issue and removes %s to accept it as it is",
			markdown.Quote(m.Agent), m.ID, m.What(), pv)
		v.Label = pv
		out = append(out, v)
	}
	return out
}

// recordResults sets l's accepted results: earlier ones not gone, and each
// well-formed result the run read whose author may speak as its agent, by
// `report` or by API. A prune starts the list anew. It also records what the
// run saw of the comments.
func (e *decision) recordResults(l *ledger.Record, pruned bool) {
	var refs []ledger.ResultRef
	if old := e.trust.ledger; old != nil && !pruned {
		refs = slices.DeleteFunc(slices.Clone(old.Results), func(r ledger.ResultRef) bool {
			return slices.ContainsFunc(e.plan.Missing, func(m Missing) bool { return m.ID == r.ID })
		})
	}
	for _, c := range e.liveComments() {
		if c.TooLarge || c.Author == e.in.Self || !e.speaks(c) || slices.ContainsFunc(refs, func(r ledger.ResultRef) bool { return r.ID == c.ID }) {
			continue
		}
		r, ok := agentcomment.ResultOf(c.ID, c.HTMLURL, c.Body)
		if !ok || !wellFormed(c.Body) {
			continue
		}
		refs = append(refs, ledger.ResultRef{ID: c.ID, Agent: r.Agent, Digest: ledger.ResultDigest(c.Body)})
	}
	if len(refs) > ledger.MaxResults {
		refs = refs[len(refs)-ledger.MaxResults:]
	}
	l.Results = refs
	e.recordSeen(l)
}

// recordSeen records seen comments when results must be kept.
func (e *decision) recordSeen(l *ledger.Record) {
	if len(l.Results) == 0 {
		l.Seen = nil
		return
	}
	seen := &ledger.CommentsSeen{Count: e.in.Issue.Comments}
	for _, c := range e.liveComments() {
		seen.Last = max(seen.Last, c.ID)
	}
	l.Seen = seen
}

// wellFormed: comment-protocol would find nothing in header and footer.
func wellFormed(body string) bool {
	_, probs := agentcomment.Parse(body)
	return len(probs) == 0
}
