package history

import (
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// Report is the answer of `history --verify`, text or JSON.
type Report struct {
	Issue int64 `json:"issue"`
	// Verified says every signature checked verifies and the chain holds.
	Verified bool `json:"verified"`
	// Records and Parts count the ledger records and archive parts whose
	// signatures verified; KeyIDs are the keys that signed them.
	Records int      `json:"records"`
	Parts   int      `json:"parts"`
	KeyIDs  []string `json:"key_ids"`
	// Older counts the archive parts with no Ed25519 signature to check,
	// written before parts were signed so (the notes say how each is
	// proven).
	Older int `json:"older_parts"`
	// Held are the ids of the public keys checked with.
	Held []string `json:"public_keys"`
	// Entries counts the history entries rebuilt.
	Entries  int       `json:"entries"`
	Problems []Problem `json:"problems"`
	Notes    []Problem `json:"notes,omitempty"`
}

// Problem is one failure (or note) of a verification, naming its comment
// when there is one.
type Problem struct {
	Comment int64  `json:"comment,omitempty"`
	URL     string `json:"url,omitempty"`
	Message string `json:"message"`
}

// String renders the problem as "comment ID (URL): message".
func (p Problem) String() string {
	switch {
	case p.Comment == 0:
		return p.Message
	case p.URL == "":
		return fmt.Sprintf("comment %d: %s", p.Comment, p.Message)
	}
	return fmt.Sprintf("comment %d (%s): %s", p.Comment, p.URL, p.Message)
}

// Verify checks every signature of an issue's history, the ledger record
// and every archive part, with in.Keys (the published public keys: no
// secret is needed), and the chain of parts up to the one the record
// names. The issue body is not signed, so it is noted, not judged.
func Verify(in Input) Report {
	f := in.read()
	v := verification{issue: in.Issue, snap: in.Snapshot, keys: in.Keys, found: f}
	return v.report()
}

// verification is what `history --verify` found.
type verification struct {
	issue int64
	snap  *live.Snapshot
	keys  ledger.Keys
	found
}

// recordKeyID reads the key id a ledger record line names.
var recordKeyID = regexp.MustCompile(` kid=([0-9a-f]{16}) sig=`)

// report sums up what was verified.
func (v verification) report() Report {
	r := Report{Issue: v.issue, Held: v.keys.KeyIDs(), Entries: len(v.rebuilt), KeyIDs: []string{}, Problems: []Problem{}}
	urls, bodies := v.commentIndex()
	kids := map[string]bool{}
	switch {
	case v.end.ledger != nil:
		r.Records = 1
		if m := recordKeyID.FindStringSubmatch(ledger.Line(v.snap.Status.Body)); m != nil {
			kids[m[1]] = true
		}
	case v.end.problem != "":
		status := v.statusID()
		r.Problems = append(r.Problems, Problem{Comment: status, URL: urls[status], Message: v.end.problem})
	default:
		r.Problems = append(r.Problems, v.unverifiedStatus(urls)...)
	}
	r.Parts, r.Older = v.countParts(bodies, kids)
	r.KeyIDs = slices.Sorted(maps.Keys(kids))
	v.addProblems(&r, urls)
	r.Verified = len(r.Problems) == 0
	return r
}

// commentIndex maps the issue's comments, the status comment among them,
// to their URLs and bodies.
func (v verification) commentIndex() (urls map[int64]string, bodies map[int64]string) {
	urls, bodies = map[int64]string{}, map[int64]string{}
	for _, c := range v.snap.Comments() {
		urls[c.ID], bodies[c.ID] = c.HTMLURL, c.Body
	}
	if st := v.snap.Status; st != nil {
		urls[st.ID] = st.HTMLURL
	}
	return urls, bodies
}

// unverifiedStatus names the comments that carry the status marker and a
// ledger record that does not verify, when no trusted record was found:
// the guard's status comment edited (its record no longer names the
// guard's user, so the reader did not take it for the guard's).
func (v verification) unverifiedStatus(urls map[int64]string) []Problem {
	var out []Problem
	for _, c := range v.snap.Comments() {
		if !strings.Contains(c.Body, issues.StatusMarker(v.issue)) || strings.Contains(c.Body, prune.MarkerPrefix) {
			continue
		}
		if _, problem := ledger.Read(&c, v.issue, v.keys); problem != "" {
			out = append(out, Problem{Comment: c.ID, URL: urls[c.ID],
				Message: problem + " (this comment carries the guard's status marker: it is the guard's status comment, edited, or an impostor)"})
		}
	}
	return out
}

// statusID is the id of the guard's status comment, or 0.
func (v verification) statusID() int64 {
	if v.snap.Status == nil {
		return 0
	}
	return v.snap.Status.ID
}

// countParts counts the archive parts the history was rebuilt from, once
// each: those whose signature verified (their key ids go into kids), and
// the older ones with none to check.
func (v verification) countParts(bodies map[int64]string, kids map[string]bool) (parts, older int) {
	seen := map[int64]bool{}
	for _, e := range v.rebuilt {
		if e.Comment == 0 || seen[e.Comment] {
			continue
		}
		seen[e.Comment] = true
		a, err := prune.ParseArchive(bodies[e.Comment])
		switch {
		case err != nil:
			continue
		case a.Kid == "":
			older++ // a note says how it is proven
			continue
		case a.CheckSignature(v.keys.ArchiveVerifier()) != prune.SigValid:
			continue // a problem says why
		}
		parts++
		kids[a.Kid] = true
	}
	return parts, older
}

// addProblems adds the archives' problems and notes, the body's notes and
// the note on authors not trusted.
func (v verification) addProblems(r *Report, urls map[int64]string) {
	for _, p := range v.problems {
		q := Problem{Comment: p.Comment, URL: urls[p.Comment], Message: p.Message}
		if p.Note {
			r.Notes = append(r.Notes, q)
		} else {
			r.Problems = append(r.Problems, q)
		}
	}
	for _, b := range v.body {
		r.Notes = append(r.Notes, Problem{Message: b + " (the body is not signed: --verify does not judge it)"})
	}
	if len(v.others) > 0 {
		r.Notes = append(r.Notes, Problem{Message: fmt.Sprintf(
			"archive comments by %s were not checked: only %q's are the guard's (pass --guard-user LOGIN to check another's)",
			quotedLogins(v.others), v.snap.Guard)})
	}
}

// Summary is the one line of an intact history.
func (r Report) Summary() string {
	signers := "no key"
	switch len(r.KeyIDs) {
	case 0:
	case 1:
		signers = "key " + r.KeyIDs[0]
	default:
		signers = "keys " + strings.Join(r.KeyIDs, ", ")
	}
	older := ""
	if r.Older > 0 {
		older = fmt.Sprintf("; %s with no Ed25519 signature, from before (see the notes)", markdown.Plural(r.Older, "older archive part"))
	}
	return fmt.Sprintf("issue #%d: the history is intact: %s and %s verified, signed by %s%s; %s",
		r.Issue, markdown.Plural(r.Records, "ledger record"), markdown.Plural(r.Parts, "archive part"), signers, older,
		markdown.Plural(r.Entries, "history entry"))
}

// WriteText writes the report as text: each note and problem on stderr,
// then the summary line on stdout, or on stderr the count of problems.
func (r Report) WriteText(stdout, stderr io.Writer) {
	for _, n := range r.Notes {
		fmt.Fprintf(stderr, "gns-guard: history: issue #%d: note: %s\n", r.Issue, oneLine(n.String()))
	}
	for _, p := range r.Problems {
		fmt.Fprintf(stderr, "gns-guard: history: issue #%d: %s\n", r.Issue, oneLine(p.String()))
	}
	if r.Verified {
		fmt.Fprintln(stdout, r.Summary())
	} else {
		fmt.Fprintf(stderr, "gns-guard: history: issue #%d: verification failed: %s\n", r.Issue, markdown.Plural(len(r.Problems), "problem"))
	}
}

// oneLine keeps a message on one line.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", " ")
}
