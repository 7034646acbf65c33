package history

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// Entry is one entry of the history as `history` prints it.
type Entry struct {
	Seq        int    `json:"seq" yaml:"seq"`
	Agent      string `json:"agent" yaml:"agent"`
	Action     string `json:"action" yaml:"action"`
	Invocation string `json:"invocation,omitempty" yaml:"invocation,omitempty"`
	Timestamp  string `json:"timestamp,omitempty" yaml:"timestamp,omitempty"`
	// Source is "archive" (Comment names the archive comment) or
	// "checkpoint" (the issue body's history_tail or history).
	Source  string `json:"source" yaml:"source"`
	Comment int64  `json:"comment,omitempty" yaml:"comment,omitempty"`
}

// Input is an issue as read whole, and what to prove its history with.
type Input struct {
	Snapshot *live.Snapshot
	Issue    int64
	// Keys check the ledger record and the archive parts' signatures.
	Keys ledger.Keys
	// Unproven reads the archives without proving their chain: they are
	// checked by their hash only, ordered by comment id.
	Unproven bool
	Done     <-chan struct{} // the parse deadline
}

// Result is an issue's history rebuilt, with what is wrong with it.
type Result struct {
	Issue int64
	// Guard is the login whose archive comments are trusted; others are
	// the authors of archive comments that are not.
	Guard   string
	others  map[string]bool
	Entries []Entry
	// Notes say how a part was proven; any problem is a violation.
	Notes, Problems []string
}

// found is what reading the archives and the body found.
type found struct {
	rebuilt  []prune.Rebuilt
	problems []prune.Problem // the archives', notes among them
	body     []string        // what is wrong with the body's checkpoint
	others   map[string]bool
	end      chainEnd
}

// read rebuilds the history from the archives and the checkpoint's tail,
// proving the chain up to the part the guard's ledger records.
func (in Input) read() found {
	s := in.Snapshot
	var f found
	var tail []prune.Entry
	tail, f.body = historyTail(checkpoint.Parse(s.Issue.Body, checkpoint.Options{Issue: in.Issue, Done: in.Done}))
	var archives []prune.Comment
	archives, f.others = archiveComments(s.Comments(), s.Guard)
	if !in.Unproven {
		f.end = readChainEnd(s, in.Issue, in.Keys)
	}
	f.rebuilt, f.problems = prune.Rebuild(archives, s.Guard, in.Issue, tail, f.end.chain)
	return f
}

// Rebuild rebuilds an issue's full history from its archive comments and
// the checkpoint's current tail, in order. Unless in.Unproven, it proves
// the archive chain from the first part to the one the guard's ledger
// records.
func Rebuild(in Input) Result {
	f := in.read()
	problems := f.body
	if f.end.problem != "" {
		problems = append(problems, f.end.problem+": the end of the archive chain cannot be proven")
	}
	notes, problems := splitNotes(f.problems, problems)
	return Result{Issue: in.Issue, Guard: in.Snapshot.Guard, others: f.others, Entries: entries(f.rebuilt), Notes: notes, Problems: problems}
}

// historyTail is the end of the history the issue body's checkpoint
// holds, with what is wrong with it.
func historyTail(parsed checkpoint.Result) ([]prune.Entry, []string) {
	switch {
	case parsed.Checkpoint == nil && len(parsed.Blocks) == 0:
		return nil, []string{"the issue body has no checkpoint block: the history ends with the archives"}
	case parsed.Checkpoint == nil:
		return nil, []string{"the issue body's checkpoint cannot be read (run 'gns-guard check'): the history ends with the archives"}
	}
	var problems []string
	if !parsed.Valid() {
		problems = append(problems, "the issue body's checkpoint has errors (run 'gns-guard check'); its entries are included as read")
	}
	return prune.FromCheckpoint(parsed.Checkpoint.Entries()), problems
}

// archiveComments are the issue's comments as prune reads them, with the
// authors of archive comments that are not trusted.
func archiveComments(comments []issues.Comment, trusted string) ([]prune.Comment, map[string]bool) {
	in := make([]prune.Comment, len(comments))
	others := map[string]bool{}
	for i, c := range comments {
		in[i] = prune.Comment{ID: c.ID, Author: c.Author, Body: c.Body}
		if c.Author != trusted && strings.Contains(c.Body, prune.MarkerPrefix) {
			others[c.Author] = true
		}
	}
	return in, others
}

// chainEnd is where the archive chain must end: the part the guard's
// ledger records, or why that is not known.
type chainEnd struct {
	chain   *prune.Chain
	ledger  *ledger.Record
	problem string
}

// readChainEnd reads the guard's ledger for the end of the archive chain.
func readChainEnd(s *live.Snapshot, number int64, keys ledger.Keys) chainEnd {
	end := chainEnd{chain: &prune.Chain{Keys: keys.ArchiveVerifier(), Repo: s.Issue.RepoID}}
	end.ledger, end.problem = ledger.Read(s.Status, number, keys)
	if l := end.ledger; l != nil {
		end.chain.Known, end.chain.Head, end.chain.Count = true, l.Archive, l.Archived
	}
	return end
}

// splitNotes sorts the rebuild's problems into notes and problems, the
// latter after the ones known before.
func splitNotes(found []prune.Problem, problems []string) ([]string, []string) {
	var notes []string
	for _, p := range found {
		if p.Note {
			notes = append(notes, p.String())
		} else {
			problems = append(problems, p.String())
		}
	}
	return notes, problems
}

// entries are the rebuilt entries as `history` prints them.
func entries(rebuilt []prune.Rebuilt) []Entry {
	out := make([]Entry, len(rebuilt))
	for i, r := range rebuilt {
		out[i] = Entry{Seq: r.Seq, Agent: r.Agent, Action: r.Action, Invocation: r.Invocation, Timestamp: r.Timestamp, Source: "checkpoint"}
		if r.Comment != 0 {
			out[i].Source, out[i].Comment = "archive", r.Comment
		}
	}
	return out
}

// YAML is the entries as YAML. It holds agents' text: print it as
// untrusted.
func (r Result) YAML() (string, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := errors.Join(enc.Encode(r.Entries), enc.Close()); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// WriteProblems writes, a line each, the authors not trusted, the notes
// and the problems.
func (r Result) WriteProblems(w io.Writer) {
	if len(r.others) > 0 {
		fmt.Fprintf(w, "gns-guard: history: note: archive comments by %s were not trusted (only %q's are); pass --trust LOGIN to read them\n",
			quotedLogins(r.others), r.Guard)
	}
	for _, p := range r.Notes {
		fmt.Fprintf(w, "gns-guard: history: issue #%d: note: %s\n", r.Issue, p)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "gns-guard: history: issue #%d: %s\n", r.Issue, p)
	}
}

// quotedLogins lists logins quoted, sorted and comma-separated.
func quotedLogins(logins map[string]bool) string {
	quoted := make([]string, 0, len(logins))
	for l := range logins {
		quoted = append(quoted, fmt.Sprintf("%q", l))
	}
	slices.Sort(quoted)
	return strings.Join(quoted, ", ")
}
