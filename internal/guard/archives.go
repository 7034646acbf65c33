package guard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// ArchiveMatch is what recent comments hold of the planned archive: posted
// parts, impostors, stale archives to replace.
type ArchiveMatch struct {
	// Have maps a 1-based part to the lowest id posting it.
	Have map[int]int64
	// Impostors copy the marker and hash but differ: reported, left alone,
	// and the real archive posted.
	Impostors []issues.Comment
	// Stale are the guard's archives posted by a run that never patched the
	// body (their entries are all still in the checkpoint): the plan
	// replaces them, so they are deleted, or history would double.
	Stale []int64
}

// MatchArchives compares the planned archive with the issue's last
// comments. A part counts as posted only when one of the guard's own
// comments says exactly what the plan posts, never for its marker or hash
// alone, which anyone can copy (`gns-guard prune` prints the hash).
func MatchArchives(in Input, pr *prune.Result) ArchiveMatch {
	m := ArchiveMatch{Have: map[int]int64{}}
	n := in.Issue.Number
	for _, c := range in.Recent {
		if !strings.Contains(c.Body, issues.ArchiveMarkerPrefix(n)) {
			continue
		}
		a, err := prune.ParseArchive(c.Body)
		if err != nil {
			continue
		}
		mine := c.Author == in.Self
		switch {
		case a.SHA256 == pr.SHA256 && mine && a.Part <= len(pr.Archives) && SamePart(c.Body, pr.Archives[a.Part-1]):
			if id, ok := m.Have[a.Part]; !ok || c.ID < id {
				m.Have[a.Part] = c.ID
			}
		case a.SHA256 == pr.SHA256:
			m.Impostors = append(m.Impostors, c)
		case mine && pr.Supersedes(a):
			m.Stale = append(m.Stale, c.ID)
		}
	}
	return m
}

// ImpostorNote names impostor comments; "" for none.
func (m ArchiveMatch) ImpostorNote() string {
	if len(m.Impostors) == 0 {
		return ""
	}
	ids := make([]string, len(m.Impostors))
	for i, c := range m.Impostors {
		ids[i] = fmt.Sprintf("%d (by %s)", c.ID, markdown.Quote(c.Author))
	}
	return fmt.Sprintf("Comment(s) %s carry the marker and hash of the archive this run posts but not its content (entries, chain or "+
		"signature): they are not the guard's archive and were ignored; `gns-guard history` does not count them.", strings.Join(ids, ", "))
}

// SamePart ignores line endings and surrounding blank lines.
func SamePart(body, planned string) bool {
	norm := func(s string) string { return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n")) }
	return norm(body) == norm(planned)
}

// Redundant returns which of ids, archives this run posted before losing its
// body write, are redundant now: a concurrent run archived their entries and
// wrote its body. One adopted, or whose entries the body still holds, stays for
// the next plan. An id no longer among the comments is gone.
func Redundant(in Input, ids []int64) []int64 {
	n := in.Issue.Number
	var body []prune.Entry
	if res := checkpoint.Parse(in.Issue.Body, checkpoint.Options{Issue: n, MaxBytes: in.Config.MaxCheckpointBytes,
		Done: in.Done}); res.Checkpoint != nil {
		body = prune.FromCheckpoint(res.Checkpoint.Entries())
	}
	archived := map[int64][]prune.Entry{}
	for _, c := range append(slices.Clone(in.Older), in.Recent...) {
		if c.Author != in.Self || !strings.Contains(c.Body, issues.ArchiveMarkerPrefix(n)) {
			continue
		}
		if a, err := prune.ParseArchive(c.Body); err == nil {
			archived[c.ID] = a.Entries
		}
	}
	held := func(id int64, e prune.Entry) bool {
		for other, es := range archived {
			if other != id && slices.Contains(es, e) {
				return true
			}
		}
		return false
	}
	var out []int64
	for _, id := range ids {
		mine, ok := archived[id]
		if !ok || len(mine) == 0 {
			continue
		}
		if !slices.ContainsFunc(mine, func(e prune.Entry) bool { return slices.Contains(body, e) || !held(id, e) }) {
			out = append(out, id)
		}
	}
	return out
}
