package prune

import (
	"cmp"
	"fmt"
	"slices"
)

// Part is one archive comment read back: its id and what it holds.
type Part struct {
	ID      int64
	Archive *Archive
}

// Chain is what proves an issue's archive parts: the link of the last part
// and the count of archived entries the guard's ledger records, and the
// keys that verify the parts' signatures. Every part records the link of the part before it, back to
// Genesis, so the ledger's last link commits to every entry archived: an
// archive edited (its link changes), deleted (its successor's prev leads
// nowhere) or reordered (the chain runs against the comments' order) shows.
type Chain struct {
	// Head is the link of the last part the ledger records ("" or Genesis:
	// none), and Count the entries archived up to it.
	Head  string
	Count int
	// Known is false when no trusted ledger record was found: then the end
	// of the chain cannot be proven (a deleted last archive cannot show),
	// and that is a problem.
	Known bool
	// Keys verify the parts' signatures: holding any key, every part's
	// signature must verify (nil: nothing is checked).
	Keys Verifier
	// Repo is the repository's id: a part that names another repository's
	// (a copy from there) is not this issue's.
	Repo int64
}

// maxChain bounds the parts a chain is followed through.
const maxChain = 1 << 20

// Extend follows the chain past head: a part whose prev is head and whose
// count continues count (and, with keys, whose signature verifies) is the
// next one, as long as there is exactly one such (copies of one part count
// once) and held, when not nil, does not say its run never wrote its body.
// It returns the new head and count, and the parts followed. A run that
// posted an archive and died before recording it leaves such parts; the
// next run picks them up. ambiguous holds the parts of a fork, if it
// stopped at one.
func Extend(head string, count int, parts []Part, keys Verifier, held func(*Archive) bool) (newHead string, newCount int, followed, ambiguous []Part) {
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

// prove walks the chain back from the ledger's head (extended past it by
// Extend: a run that died before recording its archive) to Genesis, and
// returns the parts in order. Each broken link is a problem naming the
// comment next to it; a trusted part off the proven chain, one whose
// signature does not verify, or one that follows a later comment's part is
// a problem naming that comment. A part on the chain signed by a key not
// held is a key problem; one signed with the secret itself (HMAC) and no
// secret held is proven by the chain alone, a note. When the chain cannot
// be proven, what can be read is returned ordered by the counts the parts
// claim.
func (c Chain) prove(parts []Part) ([]Part, []Problem) {
	var problems []Problem
	bad := func(id int64, format string, args ...any) {
		problems = append(problems, Problem{Comment: id, Message: fmt.Sprintf(format, args...)})
	}
	var good []Part
	byLink := map[string]Part{}
	sigs := map[int64]Signature{}
	for _, p := range parts {
		a := p.Archive
		s := a.CheckSignature(c.Keys)
		if s == SigInvalid {
			bad(p.ID, "%s", badSignature(a))
			continue
		}
		sigs[p.ID] = s
		good = append(good, p)
		if q, ok := byLink[a.Link()]; !ok || p.ID < q.ID {
			byLink[a.Link()] = p
		}
	}
	head, count := c.Head, c.Count
	if head == "" {
		head = Genesis
	}
	if !c.Known {
		problems = append(problems, Problem{Message: "no trusted ledger record (the guard's status comment) was found: the end of the archive chain cannot be proven, so a deleted last archive would not show"})
	}
	ledgerHead := head
	head, count, _, fork := Extend(head, count, good, c.Keys, nil)
	if len(fork) > 0 {
		bad(fork[0].ID, "archive parts in comments %s all claim to follow the same part: one of them is a copy that was edited, or forged", joinIDs(fork))
	}
	// Walk back from the head to Genesis.
	var chain []Part
	onChain := map[string]bool{}
	cur, want := head, count
	complete := true
	for i := 0; cur != Genesis; i++ {
		p, ok := byLink[cur]
		if !ok || i > len(byLink) {
			complete = false
			if len(chain) == 0 {
				if cur == ledgerHead {
					bad(0, "the last archive part the ledger records (entries up to %d) is missing: its comment was deleted, or edited so that it no longer matches the ledger", want)
				} else {
					bad(0, "the last archive part (entries up to %d) is missing: its comment was deleted or edited", want)
				}
			} else {
				next := chain[len(chain)-1]
				bad(next.ID, "the archive part before this one (entries up to %d) is missing: its comment was deleted, or edited so that it no longer matches the link this part records", want)
			}
			break
		}
		a := p.Archive
		if a.Count != want {
			complete = false
			bad(p.ID, "archive part %d/%d says it ends at entry %d of the issue's archived entries, but the chain expects %d: it was edited", a.Part, a.Parts, a.Count, want)
			break
		}
		chain = append(chain, p)
		onChain[cur] = true
		cur, want = a.Prev, a.Count-len(a.Entries)
	}
	if complete && want != 0 {
		complete = false
		bad(chain[len(chain)-1].ID, "the first archive part starts after entry %d, not at the first entry: it was edited", want)
	}
	slices.Reverse(chain)
	for i := 1; i < len(chain); i++ {
		if chain[i].ID < chain[i-1].ID {
			bad(chain[i].ID, "archive part %d/%d (entries %s) follows the part in comment %d in the chain but comes before it on the issue: the archive comments were reordered (their bodies swapped by edits)",
				chain[i].Archive.Part, chain[i].Archive.Parts, spanText(chain[i].Archive), chain[i-1].ID)
		}
	}
	for _, p := range good {
		a := p.Archive
		switch {
		case !onChain[a.Link()] && !slices.ContainsFunc(fork, func(f Part) bool { return f.ID == p.ID }):
			unknown := ""
			if sigs[p.ID] == SigUnknownKey {
				unknown = fmt.Sprintf(" (and is signed by key %s, which this workflow does not hold)", a.Kid)
			}
			bad(p.ID, "archive part %d/%d (claiming entries %s) is not on the chain the ledger proves%s: it was edited, forged, or posted by a run that was never recorded", a.Part, a.Parts, spanText(a), unknown)
		case !onChain[a.Link()]:
		case sigs[p.ID] == SigUnknownKey:
			bad(p.ID, "%s", unknownKey(a, c.Keys))
		case sigs[p.ID] == SigUnchecked:
			problems = append(problems, Problem{Comment: p.ID, Note: true, Message: fmt.Sprintf("archive part %d/%d (entries %s) was signed with the secret ledger-key itself, before parts were signed with Ed25519, which no public key verifies: the chain of links from the signed ledger proves it", a.Part, a.Parts, spanText(a))})
		}
	}
	if complete && len(fork) == 0 {
		return chain, problems
	}
	// Unproven: every distinct part, in the order its counts claim.
	var all []Part
	for _, p := range byLink {
		all = append(all, p)
	}
	slices.SortFunc(all, func(a, b Part) int {
		fa, _ := a.Archive.span()
		fb, _ := b.Archive.span()
		return cmp.Or(cmp.Compare(fa, fb), cmp.Compare(a.ID, b.ID))
	})
	return all, problems
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
