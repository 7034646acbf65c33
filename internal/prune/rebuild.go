package prune

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
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
	// Comment is the archive's lowest comment id, or 0.
	Comment int64
	Message string
	// Note is worth saying but proves nothing wrong.
	Note bool
}

// String renders the problem as "comment ID: message".
func (p Problem) String() string {
	if p.Comment == 0 {
		return p.Message
	}
	return fmt.Sprintf("comment %d: %s", p.Comment, p.Message)
}

// Rebuilt is a rebuilt history entry and where it was found.
type Rebuilt struct {
	Entry
	// Seq is 1-based in the full history.
	Seq int
	// Comment holds the entry; 0 for the current checkpoint.
	Comment int64
}

// Rebuild puts an issue's full history back together: the entries of the
// archive comments trusted wrote, oldest first, then tail. A part's copies
// count once; an archive that fails Verify is a problem, still read as far
// as it goes. issue, when not 0, is the issue they must name. With chain
// set, chained parts are proven (Chain).
func Rebuild(comments []Comment, trusted string, issue int64, tail []Entry, chain *Chain) ([]Rebuilt, []Problem) {
	r := &rebuild{trusted: trusted, issue: issue, chain: chain, groups: map[string]*archiveGroup{}, seen: map[int64]bool{}}
	for _, c := range comments {
		r.read(c)
	}
	for _, g := range r.byFirstComment() {
		r.addArchive(g)
	}
	if chain != nil {
		r.addChained()
	}
	for _, e := range tail {
		r.add(e, 0)
	}
	return r.out, r.problems
}

// rebuild is one Rebuild under way.
type rebuild struct {
	trusted string
	issue   int64
	chain   *Chain
	// Parts by archive hash; chained parts are left to Chain.prove.
	groups  map[string]*archiveGroup
	chained []Part
	seen    map[int64]bool
	out     []Rebuilt
	// problems are reported in the order they are found.
	problems []Problem
}

// archiveGroup is one archive's parts found on the issue.
type archiveGroup struct {
	sha   string
	first int64 // lowest comment id
	parts map[int]*Archive
	ids   map[int]int64
}

func (r *rebuild) problem(p Problem) { r.problems = append(r.problems, p) }

// add appends e, found in comment id, to the history.
func (r *rebuild) add(e Entry, id int64) {
	r.out = append(r.out, Rebuilt{Entry: e, Seq: len(r.out) + 1, Comment: id})
}

// read takes in one comment: an archive part by the trusted author is
// kept, one that cannot be read is a problem, anything else is passed over.
func (r *rebuild) read(c Comment) {
	if r.trusted == "" || c.Author != r.trusted || r.seen[c.ID] || !strings.Contains(c.Body, MarkerPrefix) {
		return
	}
	r.seen[c.ID] = true
	a, err := ParseArchive(c.Body)
	switch {
	case errors.Is(err, ErrNotArchive):
	case err != nil:
		r.problem(Problem{Comment: c.ID, Message: err.Error()})
	case r.admit(c.ID, a):
		r.group(c.ID, a)
	}
}

// admit reports whether part a, in comment id, is grouped by its hash: a
// part naming another issue or repository is a problem, and with a chain a
// chained part is left to the chain (one written before is grouped, and
// noted).
func (r *rebuild) admit(id int64, a *Archive) bool {
	chain := r.chain
	switch {
	case r.issue != 0 && a.Issue != r.issue:
		r.problem(Problem{Comment: id, Message: fmt.Sprintf("archive: it names issue %d, not %d; ignored", a.Issue, r.issue)})
		return false
	case chain != nil && chain.Repo != 0 && a.Repo != 0 && a.Repo != chain.Repo:
		r.problem(Problem{Comment: id, Message: fmt.Sprintf("archive: it names repository %d, not this one (%d): a copy; ignored", a.Repo, chain.Repo)})
		return false
	case chain != nil && a.Format == FormatVersion:
		r.chained = append(r.chained, Part{ID: id, Archive: a})
		return false
	case chain != nil:
		r.problem(Problem{Comment: id, Note: true, Message: fmt.Sprintf("archive %.12s… part %d/%d was written before archive parts "+
			"were chained: it is checked by its hash only", a.SHA256, a.Part, a.Parts)})
	}
	return true
}

// group files part a; for duplicate parts the lower id wins.
func (r *rebuild) group(id int64, a *Archive) {
	g := r.groups[a.SHA256]
	if g == nil {
		g = &archiveGroup{sha: a.SHA256, first: id, parts: map[int]*Archive{}, ids: map[int]int64{}}
		r.groups[a.SHA256] = g
	}
	g.first = min(g.first, id)
	if held, dup := g.ids[a.Part]; dup && held < id {
		return
	}
	g.parts[a.Part], g.ids[a.Part] = a, id
}

// byFirstComment returns the archives ordered by their lowest comment id.
func (r *rebuild) byFirstComment() []*archiveGroup {
	ordered := make([]*archiveGroup, 0, len(r.groups))
	for _, g := range r.groups {
		ordered = append(ordered, g)
	}
	slices.SortFunc(ordered, func(a, b *archiveGroup) int { return cmp.Compare(a.first, b.first) })
	return ordered
}

// addArchive adds the entries of archive g, in part order. One that fails
// Verify is a problem, and what can be read of it is still added, unless
// the chain is proven.
func (r *rebuild) addArchive(g *archiveGroup) {
	numbers := slices.Sorted(maps.Keys(g.parts))
	parts := make([]*Archive, len(numbers))
	for i, k := range numbers {
		parts[i] = g.parts[k]
	}
	if err := Verify(parts); err != nil {
		r.problem(Problem{Comment: g.first, Message: err.Error()})
		if r.chain != nil {
			return // proving the chain, what does not verify is left out
		}
	}
	for _, k := range numbers {
		for _, e := range g.parts[k].Entries {
			r.add(e, g.ids[k])
		}
	}
}

// addChained adds entries as the chain proves them.
func (r *rebuild) addChained() {
	parts, ps := r.chain.prove(r.chained)
	r.problems = append(r.problems, ps...)
	for _, p := range parts {
		for _, e := range p.Archive.Entries {
			r.add(e, p.ID)
		}
	}
}

// Entries returns the entries of a rebuilt history.
func Entries(rs []Rebuilt) []Entry {
	out := make([]Entry, len(rs))
	for i, r := range rs {
		out[i] = r.Entry
	}
	return out
}
