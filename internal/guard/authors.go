package guard

import (
	"slices"
	"time"

	"github.com/gns-guard/gns-guard/internal/agentcomment"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/receipt"
)

// Who speaks on an issue (docs/ledger.md#what-the-next-agent-reads): an
// account that cannot write the issue is an outsider, whose comments are
// left out of the entry load and outside the judged conversation; a
// result counts as agent X's only when its author may speak as X (the
// agents setting, else any writer).

// WriterList answers Plan.AskWriters: issue writers, when read, or why not
// (Problem).
type WriterList struct {
	Logins  []string
	Read    time.Time
	Problem string
}

// judgeAuthors settles who speaks on the issue: the record's access stamp, or a
// new one from the server's list (Plan.AskWriters) when the stamp is missing,
// stale or lacks an author. A new stamp keeps every writer listed, so a first
// comment costs no read (docs/contract.md#6-reading-the-issue-cheaply). Until
// the list comes, an unknown author counts as a writer.
func (e *decision) judgeAuthors() {
	var old *ledger.AccessStamp
	if l := e.trust.ledger; l != nil {
		old = l.Access
	}
	authors := e.commentAuthors()
	st := old
	switch wl := e.in.Writers; {
	case wl != nil && wl.Problem == "":
		known := append(append(authors, old.Logins()...), wl.Logins...)
		st = ledger.NewAccessStamp(wl.Read, wl.Logins, known...)
	case wl == nil && e.needsWriters(old, authors):
		e.plan.AskWriters = true
	}
	e.access = st
	a := issues.Authors{Known: e.in.Writers == nil || e.in.Writers.Problem == "", Agents: e.cfg.Agents, Everyone: e.cfg.LoadCommentsFrom == "everyone"}
	a.Writers = []string{e.in.Self, e.in.Issue.RepoOwner}
	for _, login := range authors {
		if writer, known := st.Classify(login); writer || !known {
			a.Writers = append(a.Writers, login)
		}
	}
	slices.Sort(a.Writers)
	a.Gate, a.Voices = e.cfg.GateAccount, e.gateVoices()
	e.plan.Authors = a
}

// gateVoices verifies the gate's comments: by id, the login the meter's
// signature says each speaks for (docs/gate.md#what-the-guard-believes).
// Without meter-public-key nothing verifies.
func (e *decision) gateVoices() map[int64]string {
	gate, key := e.cfg.GateAccount, e.cfg.MeterPublicKey
	if gate == "" || key == "" {
		return nil
	}
	out := map[int64]string{}
	for _, c := range e.comments() {
		if c.Author != gate || c.TooLarge {
			continue
		}
		if a, err := receipt.VerifyAttestation(c.Body, key, e.in.Repo, e.in.Issue.Number); err == nil {
			out[c.ID] = a.Login
		}
	}
	return out
}

// needsWriters says the stamp old cannot tell who of authors writes the issue:
// no record, a stamp missing or stale, or an author unknown. A known outsider
// costs nothing: outsiders cannot make the guard read or write, and access
// given later shows within a day (ledger.AccessMaxAge).
func (e *decision) needsWriters(old *ledger.AccessStamp, authors []string) bool {
	if old == nil && e.trust.ledger == nil && e.in.Records {
		return true // the first record: the list, read once, is kept in it
	}
	if len(authors) == 0 {
		return false
	}
	if !old.Fresh(e.in.Now) {
		return true
	}
	for _, login := range authors {
		if _, known := old.Classify(login); !known {
			return true
		}
	}
	return false
}

// commentAuthors are unique, newest first, guard and owner aside.
func (e *decision) commentAuthors() []string {
	var out []string
	for _, c := range slices.Backward(e.comments()) {
		a := c.Author
		if a == "" || a == e.in.Self || a == e.in.Issue.RepoOwner || slices.Contains(out, a) {
			continue
		}
		out = append(out, a)
	}
	return out
}

// comments are oldest first; the event's own last if unread.
func (e *decision) comments() []issues.Comment {
	cs := append(slices.Clone(e.in.Older), e.in.Recent...)
	if c := e.eventComment(); c != nil && !slices.ContainsFunc(cs, func(x issues.Comment) bool { return x.ID == c.ID }) {
		cs = append(cs, *c)
	}
	return cs
}

// outsider reports whether c's author cannot write the issue.
func (e *decision) outsider(c issues.Comment) bool {
	return c.Author != "" && !e.plan.Authors.CanWrite(c.Author)
}

// claimedAgents come from header and footer; nil for other comments.
func claimedAgents(body string) []string {
	if !agentcomment.IsAgentComment(body) {
		return nil
	}
	parsed, _ := agentcomment.Parse(body)
	var out []string
	for _, a := range []string{parsed.Agent, footerAgent(parsed)} {
		if a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

func footerAgent(c *agentcomment.Comment) string {
	if c.Footer == nil {
		return ""
	}
	return c.Footer.Agent
}

// speaks: may c's author speak as every agent claimed?
func (e *decision) speaks(c issues.Comment) bool {
	for _, a := range claimedAgents(c.Body) {
		if !e.plan.Authors.Speaks(c, a) {
			return false
		}
	}
	return true
}
