package prune

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Comment is an issue comment as Rebuild needs it.
type Comment struct {
	ID     int64
	Author string
	Body   string
}

// Problem is something wrong found while rebuilding a history. It is
// reported, never fatal: the history is rebuilt from what can be read.
type Problem struct {
	// Comment is the archive comment concerned (the lowest id of its
	// archive), or 0.
	Comment int64
	Message string
	// Note is true for something worth saying that proves nothing wrong.
	Note bool
}

// String renders the problem as "comment ID: message".
func (p Problem) String() string {
	if p.Comment == 0 {
		return p.Message
	}
	return fmt.Sprintf("comment %d: %s", p.Comment, p.Message)
}

// Rebuilt is one entry of a rebuilt history and where it was found.
type Rebuilt struct {
	Entry
	// Seq is the entry's place in the full history, from 1.
	Seq int
	// Comment is the id of the archive comment holding the entry, or 0 for
	// the current checkpoint.
	Comment int64
}

// Rebuild puts an issue's full history back together: the entries of its
// archive comments, oldest archive first, then tail (the current
// checkpoint's history_tail or history).
//
// Only comments written by trusted that carry an archive marker count; a
// trusted comment that cannot be read is a problem. Parts are grouped by
// hash; among comments holding the same part of the same archive the lowest
// id wins and the others are ignored (never counted twice); archives are
// ordered by their lowest comment id. An archive that fails Verify (a part
// missing, a hash that does not match) is a problem, and what can be read
// of it is still included, in part order. issue, when not 0, is the issue
// the archives must name.
//
// With chain set, the chained archive parts (format 2) are proven instead:
// see Chain. Parts written before chaining are read as above, first.
func Rebuild(comments []Comment, trusted string, issue int64, tail []Entry, chain *Chain) ([]Rebuilt, []Problem) {
	type group struct {
		sha   string
		first int64 // lowest comment id
		parts map[int]*Archive
		ids   map[int]int64
	}
	var problems []Problem
	var chained []Part
	groups := map[string]*group{}
	seen := map[int64]bool{}
	for _, c := range comments {
		if trusted == "" || c.Author != trusted || seen[c.ID] || !strings.Contains(c.Body, MarkerPrefix) {
			continue
		}
		seen[c.ID] = true
		a, err := ParseArchive(c.Body)
		switch {
		case errors.Is(err, ErrNotArchive):
			continue
		case err != nil:
			problems = append(problems, Problem{Comment: c.ID, Message: err.Error()})
			continue
		case issue != 0 && a.Issue != issue:
			problems = append(problems, Problem{Comment: c.ID, Message: fmt.Sprintf("archive: it names issue %d, not %d; ignored", a.Issue, issue)})
			continue
		case chain != nil && chain.Repo != 0 && a.Repo != 0 && a.Repo != chain.Repo:
			problems = append(problems, Problem{Comment: c.ID, Message: fmt.Sprintf("archive: it names repository %d, not this one (%d): a copy; ignored", a.Repo, chain.Repo)})
			continue
		case chain != nil && a.Format == FormatVersion:
			chained = append(chained, Part{ID: c.ID, Archive: a})
			continue
		case chain != nil:
			problems = append(problems, Problem{Comment: c.ID, Note: true, Message: fmt.Sprintf("archive %.12s… part %d/%d was written before archive parts were chained: it is checked by its hash only", a.SHA256, a.Part, a.Parts)})
		}
		g := groups[a.SHA256]
		if g == nil {
			g = &group{sha: a.SHA256, first: c.ID, parts: map[int]*Archive{}, ids: map[int]int64{}}
			groups[a.SHA256] = g
		}
		g.first = min(g.first, c.ID)
		if id, dup := g.ids[a.Part]; dup && id < c.ID {
			continue
		}
		g.parts[a.Part], g.ids[a.Part] = a, c.ID
	}
	ordered := make([]*group, 0, len(groups))
	for _, g := range groups {
		ordered = append(ordered, g)
	}
	slices.SortFunc(ordered, func(a, b *group) int { return cmp.Compare(a.first, b.first) })

	var out []Rebuilt
	add := func(e Entry, id int64) { out = append(out, Rebuilt{Entry: e, Seq: len(out) + 1, Comment: id}) }
	for _, g := range ordered {
		keys := make([]int, 0, len(g.parts))
		for k := range g.parts {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]*Archive, len(keys))
		for i, k := range keys {
			parts[i] = g.parts[k]
		}
		if err := Verify(parts); err != nil {
			problems = append(problems, Problem{Comment: g.first, Message: err.Error()})
			if chain != nil {
				continue // proving the chain, what does not verify is left out
			}
		}
		for _, k := range keys {
			for _, e := range g.parts[k].Entries {
				add(e, g.ids[k])
			}
		}
	}
	if chain != nil {
		parts, ps := chain.prove(chained)
		problems = append(problems, ps...)
		for _, p := range parts {
			for _, e := range p.Archive.Entries {
				add(e, p.ID)
			}
		}
	}
	for _, e := range tail {
		add(e, 0)
	}
	return out, problems
}

// Entries returns the entries of a rebuilt history.
func Entries(rs []Rebuilt) []Entry {
	out := make([]Entry, len(rs))
	for i, r := range rs {
		out[i] = r.Entry
	}
	return out
}
