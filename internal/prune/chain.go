package prune

import (
	"cmp"
	"fmt"
	"slices"
)

// Part is one archive comment read back.
type Part struct {
	ID      int64
	Archive *Archive
}

// Chain proves an issue's archive parts: the last link and entry count the
// ledger records, and the keys that verify signatures. Each part links to
// the one before it, back to Genesis, so an archive edited, deleted or
// reordered shows.
type Chain struct {
	// Head is the ledger's last link ("" or Genesis: none); Count, entries
	// to it.
	Head  string
	Count int
	// Known is false when no trusted ledger record was found: then the end
	// of the chain cannot be proven (a deleted last archive cannot show),
	// and that is a problem.
	Known bool
	// Keys, if any, must verify every part; nil checks nothing.
	Keys Verifier
	// Repo is the repository's id: a part copied from elsewhere is not this
	// issue's.
	Repo int64
}

// maxChain bounds the parts a chain is followed through.
const maxChain = 1 << 20

// Extend follows the chain past head over the one part (copies count once)
// whose prev is head, whose count continues count and whose signature
// verifies, unless held says its run never wrote its body. A run that died
// before recording its archive leaves such parts. ambiguous holds the parts
// of a fork it stopped at.
func Extend(head string, count int, parts []Part, keys Verifier, held func(*Archive) bool) (newHead string, newCount int,
	followed, ambiguous []Part) {
	if head == "" {
		head = Genesis
	}
	for range maxChain {
		var next []Part
		links := map[string]bool{}
		for _, p := range parts {
			a := p.Archive
			if a.Format != FormatVersion || a.Prev != head || a.Count != count+len(a.Entries) || !a.Verified(keys) || held != nil && held(a) {
				continue
			}
			next = append(next, p)
			links[a.Link()] = true
		}
		switch {
		case len(next) == 0:
			return head, count, followed, nil
		case len(links) > 1:
			return head, count, followed, next
		}
		p := slices.MinFunc(next, func(a, b Part) int { return cmp.Compare(a.ID, b.ID) })
		followed = append(followed, p)
		head, count = p.Archive.Link(), p.Archive.Count
	}
	return head, count, followed, nil
}

// prove walks the chain back from the ledger's head, as Extend leaves it,
// to Genesis, and returns the parts in order. A broken link, a part off the
// chain, a bad signature or one out of order is a problem naming its
// comment; an unknown key is a key problem. Unproven, parts come ordered by
// their claimed counts.
func (c Chain) prove(parts []Part) ([]Part, []Problem) {
	p := &proof{keys: c.Keys, byLink: map[string]Part{}, sigs: map[int64]Signature{}, onChain: map[string]bool{}}
	p.checkSignatures(parts)
	if !c.Known {
		p.problems = append(p.problems, Problem{Message: "no trusted ledger record (the guard's status comment) was found: the end of " +
			"the archive chain cannot be proven, so a deleted last archive would not show"})
	}
	ledgerHead := c.Head
	if ledgerHead == "" {
		ledgerHead = Genesis
	}
	head, count, _, fork := Extend(ledgerHead, c.Count, p.good, c.Keys, nil)
	p.fork = fork
	if len(fork) > 0 {
		p.bad(fork[0].ID, "archive parts in comments %s all claim to follow the same part: one of them is a copy that was edited, or forged", joinIDs(fork))
	}
	complete := p.walkBack(head, count, ledgerHead)
	slices.Reverse(p.chain)
	p.checkOrder()
	p.checkParts()
	if complete && len(fork) == 0 {
		return p.chain, p.problems
	}
	return p.byClaimedCounts(), p.problems
}

// proof is one Chain.prove under way.
type proof struct {
	keys Verifier
	// Parts passing signatures, by link (copies: lowest id), and what they
	// prove.
	good   []Part
	byLink map[string]Part
	sigs   map[int64]Signature
	// fork holds any fork past the ledger's head.
	fork []Part
	// chain is newest first while walked; onChain holds its links.
	chain   []Part
	onChain map[string]bool
	// problems are reported in the order they are found.
	problems []Problem
}

// bad reports a problem with comment id (0: none).
func (p *proof) bad(id int64, format string, args ...any) {
	p.problems = append(p.problems, Problem{Comment: id, Message: fmt.Sprintf(format, args...)})
}

// checkSignatures keeps parts that pass; each failure is a problem.
func (p *proof) checkSignatures(parts []Part) {
	for _, part := range parts {
		a := part.Archive
		s := a.CheckSignature(p.keys)
		if s == SigInvalid {
			p.bad(part.ID, "%s", badSignature(a))
			continue
		}
		p.sigs[part.ID] = s
		p.good = append(p.good, part)
		if q, ok := p.byLink[a.Link()]; !ok || part.ID < q.ID {
			p.byLink[a.Link()] = part
		}
	}
}

// walkBack follows the links from head (count entries archived) back to
// Genesis, and reports whether it got there at the first entry. A link
// that leads nowhere, or to a part whose count is not the one expected, is
// a problem, and the walk stops there.
func (p *proof) walkBack(head string, count int, ledgerHead string) bool {
	cur, want := head, count
	for i := 0; cur != Genesis; i++ {
		part, ok := p.byLink[cur]
		if !ok || i > len(p.byLink) {
			p.missing(cur == ledgerHead, want)
			return false
		}
		a := part.Archive
		if a.Count != want {
			p.bad(part.ID, "archive part %d/%d says it ends at entry %d of the issue's archived entries, but the chain expects %d: it was "+
				"edited", a.Part, a.Parts, a.Count, want)
			return false
		}
		p.chain = append(p.chain, part)
		p.onChain[cur] = true
		cur, want = a.Prev, a.Count-len(a.Entries)
	}
	if want != 0 {
		p.bad(p.chain[len(p.chain)-1].ID, "the first archive part starts after entry %d, not at the first entry: it was edited", want)
		return false
	}
	return true
}

// missing reports the part the walk back needs next (ending at entry
// want) as missing: the last one (the ledger's, when ledger is true), or
// the one before the part last walked.
func (p *proof) missing(ledger bool, want int) {
	switch {
	case len(p.chain) > 0:
		next := p.chain[len(p.chain)-1]
		p.bad(next.ID, "the archive part before this one (entries up to %d) is missing: its comment was deleted, or edited so that it "+
			"no longer matches the link this part records", want)
	case ledger:
		p.bad(0, "the last archive part the ledger records (entries up to %d) is missing: its comment was deleted, or edited so that it "+
			"no longer matches the ledger", want)
	default:
		p.bad(0, "the last archive part (entries up to %d) is missing: its comment was deleted or edited", want)
	}
}

// checkOrder reports chain parts posted after a later part: comments
// reordered.
func (p *proof) checkOrder() {
	chain := p.chain
	for i := 1; i < len(chain); i++ {
		if chain[i].ID < chain[i-1].ID {
			p.bad(chain[i].ID, "archive part %d/%d (entries %s) follows the part in comment %d in the chain but comes before it on the "+
				"issue: the archive comments were reordered (their bodies swapped by edits)",
				chain[i].Archive.Part, chain[i].Archive.Parts, spanText(chain[i].Archive), chain[i-1].ID)
		}
	}
}

// checkParts reports each part off the chain (other than a fork's), and
// each on it signed by a key not held; one on it signed with the secret
// itself, which nothing here can check, is a note.
func (p *proof) checkParts() {
	for _, part := range p.good {
		a := part.Archive
		switch {
		case !p.onChain[a.Link()] && !slices.ContainsFunc(p.fork, func(f Part) bool { return f.ID == part.ID }):
			unknown := ""
			if p.sigs[part.ID] == SigUnknownKey {
				unknown = fmt.Sprintf(" (and is signed by key %s, which this workflow does not hold)", a.Kid)
			}
			p.bad(part.ID, "archive part %d/%d (claiming entries %s) is not on the chain the ledger proves%s: it was edited, forged, or "+
				"posted by a run that was never recorded", a.Part, a.Parts, spanText(a), unknown)
		case !p.onChain[a.Link()]:
		case p.sigs[part.ID] == SigUnknownKey:
			p.bad(part.ID, "%s", unknownKey(a, p.keys))
		case p.sigs[part.ID] == SigUnchecked:
			p.problems = append(p.problems, Problem{Comment: part.ID, Note: true, Message: fmt.Sprintf("archive part %d/%d (entries %s) "+
				"was signed with the secret ledger-key itself, before parts were signed with Ed25519, which no public key verifies: the chain "+
				"of links from the signed ledger proves it", a.Part, a.Parts, spanText(a))})
		}
	}
}

// byClaimedCounts orders distinct parts by claimed counts when the chain is
// unproven.
func (p *proof) byClaimedCounts() []Part {
	var all []Part
	for _, part := range p.byLink {
		all = append(all, part)
	}
	slices.SortFunc(all, func(a, b Part) int {
		fa, _ := a.Archive.span()
		fb, _ := b.Archive.span()
		return cmp.Or(cmp.Compare(fa, fb), cmp.Compare(a.ID, b.ID))
	})
	return all
}

func spanText(a *Archive) string {
	from, to := a.span()
	return fmt.Sprintf("%d–%d", from, to)
}

func joinIDs(ps []Part) string {
	ids := make([]int64, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	slices.Sort(ids)
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(id)
	}
	return s
}
