package prune

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// Heading starts every archive comment.
const Heading = "## GNS-2 Checkpoint Archive"

// MarkerPrefix starts the hidden marker that ends every archive comment:
//
//	<!-- gns-guard:archive issue=N phase=P part=i/n sha256=<64 hex> prev=<64 hex> count=K kid=<16 hex> sig=<128 hex> -->
//
// sha256 is the archive's Hash; prev links the part before (Genesis first);
// count is the entries archived up to this part; sig is the Ed25519
// signature by key kid. Older forms: "sig=unsigned" without a key,
// "sig=<64 hex>" an HMAC under ledger-key, and format 1 ends at sha256.
const MarkerPrefix = "<!-- gns-guard:archive "

// FormatVersion is the gns_archive field of the machine-readable block
// written: 2, chained and signed parts (the key id and an Ed25519
// signature, or unsigned; an HMAC-SHA256 signature in parts written
// before).
const FormatVersion = 2

// legacyFormat predates chained parts: checked by hash only.
const legacyFormat = 1

// Genesis is the prev of an issue's first archive part.
var Genesis = strings.Repeat("0", 64)

// Unsigned is the sig when no ledger key is set.
const Unsigned = "unsigned"

// maxPhaseInMarker bounds the phase in the marker (after SanitizePhase).
const maxPhaseInMarker = 100

// maxArchiveBody: Gitea allows 65,536 characters, at most 4 bytes each.
const maxArchiveBody = 4 * DefaultMaxCommentChars

// Human-table cell limits, in characters: the JSON block always holds the
// full text. The short limits are used for an entry too big to fit in a
// comment with its full row.
var (
	cellLimits = [4]int{100, 1000, 100, 64} // agent, action, invocation, timestamp
	cellShort  = [4]int{24, 80, 24, 40}
)

// SanitizePhase renders a phase for the hidden marker: characters other
// than [A-Za-z0-9._:-] become '_', and it is cut to 100 characters. An
// empty phase is "_".
func SanitizePhase(phase string) string {
	var b strings.Builder
	for _, r := range phase {
		if b.Len() >= maxPhaseInMarker {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == ':', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// Marker returns the hidden marker of one archive part.
func Marker(a *Archive) string {
	if a.Format == legacyFormat {
		return fmt.Sprintf("%sissue=%d phase=%s part=%d/%d sha256=%s -->", MarkerPrefix, a.Issue, SanitizePhase(a.Phase), a.Part, a.Parts, a.SHA256)
	}
	kid := ""
	if a.Kid != "" {
		kid = " kid=" + a.Kid
	}
	return fmt.Sprintf("%sissue=%d phase=%s part=%d/%d sha256=%s prev=%s count=%d%s sig=%s -->",
		MarkerPrefix, a.Issue, SanitizePhase(a.Phase), a.Part, a.Parts, a.SHA256, a.Prev, a.Count, kid, a.Sig)
}

// Hash returns the archive hash: the hex sha256 of the canonical JSON of
// {"issue","phase","budget","entries"}, entries being those of all parts in
// order. It depends on nothing else (no clock), so the same body gives the
// same hash.
func Hash(issue int64, phase string, budget Snapshot, entries []Entry) string {
	if entries == nil {
		entries = []Entry{}
	}
	b, err := json.Marshal(struct {
		Issue   int64    `json:"issue"`
		Phase   string   `json:"phase"`
		Budget  Snapshot `json:"budget"`
		Entries []Entry  `json:"entries"`
	}{issue, phase, budget, entries})
	if err != nil {
		panic(err) // plain strings and integers always marshal
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Archive is one part of an archive, as ParseArchive reads it.
type Archive struct {
	// Format is FormatVersion, or 1 before chaining (no Prev, Count or Sig).
	Format   int      `json:"-"`
	Issue    int64    `json:"issue"`
	Phase    string   `json:"phase"`
	Part     int      `json:"part"`
	Parts    int      `json:"parts"`
	SHA256   string   `json:"sha256"`
	FirstSeq int      `json:"first_seq"` // sequence number (1-based, across parts) of Entries[0]
	Budget   Snapshot `json:"budget"`
	Entries  []Entry  `json:"entries"`
	// Prev is the link (Link) of the part archived just before this one on
	// the issue, or Genesis; Count the entries archived on the issue up to
	// and including this part.
	Prev  string `json:"prev,omitempty"`
	Count int    `json:"count,omitempty"`
	// Kid is the id of the key that signed the part ("" for an unsigned
	// part, or one signed before parts were signed with Ed25519), and Sig
	// its signature in hex: Ed25519 (128 digits), HMAC-SHA256 under the
	// secret ledger-key (64 digits, in parts written before), or Unsigned.
	// Neither is part of the link.
	Kid string `json:"kid,omitempty"`
	Sig string `json:"sig,omitempty"`
	// Repo is the repository's id, which the link and signature cover: a
	// part copied from another repository's issue names another (0 in
	// parts written before it was recorded).
	Repo int64 `json:"repo,omitempty"`
}

// partJSON is an archive part as JSON, one field list in one order for
// both of its uses: the machine-readable block of a comment (E is
// json.RawMessage, the entries pre-encoded) and what the part's link and
// signature cover (E is Entry, with no Kid and a nil Sig; see canonical).
type partJSON[E any] struct {
	Format   int      `json:"gns_archive"`
	Issue    int64    `json:"issue"`
	Phase    string   `json:"phase"`
	Part     int      `json:"part"`
	Parts    int      `json:"parts"`
	SHA256   string   `json:"sha256"`
	FirstSeq int      `json:"first_seq"`
	Prev     string   `json:"prev"`
	Count    int      `json:"count"`
	Budget   Snapshot `json:"budget"`
	Entries  []E      `json:"entries"`
	Kid      string   `json:"kid,omitempty"`
	Sig      *string  `json:"sig,omitempty"` // nil: left out; the block always has one
	Repo     int64    `json:"repo,omitempty"`
}

// unsignedJSON omits key id and signature; entries are never nil, written
// [].
func unsignedJSON[E any](a *Archive, entries []E) partJSON[E] {
	if entries == nil {
		entries = []E{}
	}
	return partJSON[E]{
		Format: a.Format, Issue: a.Issue, Phase: a.Phase, Part: a.Part, Parts: a.Parts, SHA256: a.SHA256,
		FirstSeq: a.FirstSeq, Prev: a.Prev, Count: a.Count, Budget: a.Budget, Entries: entries, Repo: a.Repo,
	}
}

// canonical is what link and signature cover, in a fixed encoding.
func (a *Archive) canonical() []byte {
	b, err := json.Marshal(unsignedJSON(a, a.Entries))
	if err != nil {
		panic(err) // plain strings and integers always marshal
	}
	return b
}

// Link is the part's hash, which the next part's Prev (or the ledger, for
// the last part) records: the hex sha256 of everything the part says but
// its signature. Changing any entry, number or link changes it.
func (a *Archive) Link() string {
	h := sha256.New()
	h.Write([]byte("gns-guard archive part v2\n"))
	h.Write(a.canonical())
	return hex.EncodeToString(h.Sum(nil))
}

// Entries are from..to (1-based) of the issue's archived entries.
func (a *Archive) span() (from, to int) { return a.Count - len(a.Entries) + 1, a.Count }

// archive is what render splits into comments.
type archive struct {
	issue   int64
	phase   string
	budget  Snapshot
	sha     string
	entries []Entry
	removed []checkpoint.Entry // the same entries, with their body positions
	// The chain: the link of the part before, the entries archived before
	// this archive, and the key parts are signed with (nil: unsigned).
	prev   string
	count  int
	signer Signer
	repo   int64
}

// partText holds the pre-rendered pieces of one entry.
type partText struct {
	row, short string // table rows: full and short cells
	js         json.RawMessage
}

// render splits the archive into comments of at most maxChars characters
// each, by entries, and returns them with the parts they hold (chained
// from a.prev, signed by a.signer). An entry whose full table row does not
// fit in a comment of its own gets a shortened row; one whose JSON alone
// cannot fit is an error.
func render(a archive, maxChars int) ([]string, []*Archive, error) {
	n := len(a.entries)
	texts := make([]partText, n)
	for i, e := range a.entries {
		js, err := json.Marshal(e)
		if err != nil {
			return nil, nil, fmt.Errorf("prune: encoding history entry %d: %w", i+1, err)
		}
		js = escapeAt(js)
		texts[i] = partText{row: row(i+1, e, cellLimits), short: row(i+1, e, cellShort), js: js}
	}
	// Bound the surrounding text: every number at its widest.
	bound := a.head(n, n, n)
	bound.Count, bound.Prev, bound.Kid, bound.Sig = a.count+n, Genesis, strings.Repeat("0", 16), strings.Repeat("0", 128)
	overhead := runes(a.part(bound, n, nil, nil))
	avail := maxChars - overhead
	type span struct {
		from, to int
		rows     []string
	}
	var spans []span
	cur, used := span{}, 0
	for i, t := range texts {
		cost := runes(t.row) + 1 + runes(string(t.js)) + 1
		r := t.row
		if cur.to > cur.from && used+cost > avail {
			spans = append(spans, cur)
			cur, used = span{from: i, to: i}, 0
		}
		if cur.to == cur.from && cost > avail {
			r = t.short
			cost = runes(r) + 1 + runes(string(t.js)) + 1
			if cost > avail {
				return nil, nil, tooBig(i, a, runes(string(t.js)), maxChars)
			}
		}
		cur.rows = append(cur.rows, r)
		cur.to = i + 1
		used += cost
	}
	if cur.to > cur.from {
		spans = append(spans, cur)
	}
	out := make([]string, len(spans))
	parts := make([]*Archive, len(spans))
	prev := a.prev
	if prev == "" {
		prev = Genesis
	}
	for k, s := range spans {
		js := make([]json.RawMessage, 0, s.to-s.from)
		for _, t := range texts[s.from:s.to] {
			js = append(js, t.js)
		}
		p := a.head(k+1, len(spans), s.from+1)
		p.Entries = slices.Clone(a.entries[s.from:s.to])
		p.Prev, p.Count = prev, a.count+s.to
		p.Sign(a.signer)
		prev = p.Link()
		parts[k] = p
		out[k] = a.part(p, n, s.rows, js)
		if c := runes(out[k]); c > maxChars {
			return nil, nil, fmt.Errorf("prune: archive part %d/%d is %d characters, over the limit of %d", k+1, len(spans), c, maxChars)
		}
	}
	return out, parts, nil
}

// head is a part from entry first, without entries or chain.
func (a archive) head(part, parts, first int) *Archive {
	return &Archive{Format: FormatVersion, Issue: a.issue, Phase: a.phase, Part: part, Parts: parts, SHA256: a.sha, FirstSeq: first,
		Budget: a.budget, Repo: a.repo}
}

func tooBig(i int, a archive, size, maxChars int) error {
	where := ""
	if i < len(a.removed) && a.removed[i].Pos.Line > 0 {
		where = fmt.Sprintf(" (line %d of the body)", a.removed[i].Pos.Line)
	}
	return fmt.Errorf("prune: history entry %d%s takes %d characters in the archive's JSON, more than an archive comment of at most "+
		"%d characters can hold; shorten it by hand", i+1, where, size, maxChars)
}

// part renders p's entries as rows (the table) and js (the JSON).
func (a archive) part(p *Archive, total int, rows []string, js []json.RawMessage) string {
	var b strings.Builder
	b.WriteString(Heading + "\n\n")
	first := p.FirstSeq
	last := first + len(rows) - 1
	if len(rows) == 0 {
		last = total // only for the size bound
	}
	fmt.Fprintf(&b, "Issue #%d · phase %s · part %d/%d · entries %d–%d of %d\n\n", a.issue, markdown.Cell(a.phase, 200), p.Part,
		p.Parts, first, last, total)
	b.WriteString("| # | agent | action | invocation | timestamp |\n|--:|---|---|---|---|\n")
	for _, r := range rows {
		b.WriteString(r)
		b.WriteByte('\n')
	}
	bu := a.budget
	fmt.Fprintf(&b, "\nBudget at archive time: total %d · consumed %d · remaining %d.", bu.Total, bu.Consumed, bu.Remaining)
	if np := bu.NewPhase; np != nil {
		fmt.Fprintf(&b, " New phase budget: total %d · consumed %d · remaining %d.\n", np.Total, np.Consumed, np.Remaining)
	} else {
		b.WriteString(" The budget was kept.\n")
	}
	b.WriteString("\nThe full text, for `gns-guard history`:\n\n```json\n")
	block := unsignedJSON(p, js)
	block.Kid, block.Sig = p.Kid, &p.Sig
	data, err := json.Marshal(block)
	if err != nil {
		panic(err) // pre-encoded entries and plain values always marshal
	}
	b.Write(escapeAt(data))
	b.WriteString("\n```\n\n")
	b.WriteString(Marker(p))
	b.WriteByte('\n')
	return b.String()
}

// row makes untrusted text one line: no pipes, HTML, code spans or
// @mentions.
func row(seq int, e Entry, limits [4]int) string {
	return fmt.Sprintf("| %d | %s | %s | %s | %s |", seq,
		markdown.Cell(e.Agent, limits[0]), markdown.Cell(e.Action, limits[1]),
		markdown.Cell(e.Invocation, limits[2]), markdown.Cell(e.Timestamp, limits[3]))
}

// escapeAt writes '@' as \u0040 in JSON (where it only occurs inside
// strings), so that no renderer or notifier can take it for a mention.
func escapeAt(js []byte) []byte {
	return bytes.ReplaceAll(js, []byte("@"), []byte(`\u0040`))
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// ErrNotArchive means no archive marker.
var ErrNotArchive = errors.New("not an archive comment (no archive marker)")

var (
	markerRE = regexp.MustCompile(
		`<!-- gns-guard:archive issue=(\d{1,19}) phase=([A-Za-z0-9._:-]{1,100}) part=(\d{1,9})/(\d{1,9}) sha256=([0-9a-f]{64})` +
			`(?: prev=([0-9a-f]{64}) count=(\d{1,9})(?: kid=([0-9a-f]{16}))? sig=([0-9a-f]{128}|[0-9a-f]{64}|unsigned))? -->`)
	jsonRE = regexp.MustCompile("(?m)^```json\n(\\{.*\\})\n```$")
)

// ParseArchive reads one archive comment, its marker and its JSON block,
// and checks that they agree. It checks neither the hash against the
// entries (Verify needs every part) nor the chain or signature (Link,
// Verified, Rebuild); whether to trust the author is the caller's.
func ParseArchive(body string) (*Archive, error) {
	if len(body) > maxArchiveBody {
		return nil, fmt.Errorf("archive: the comment is %d bytes, more than an archive can be", len(body))
	}
	body = strings.ReplaceAll(body, "\r\n", "\n")
	m, err := parseMarker(body)
	if err != nil {
		return nil, err
	}
	a, err := parseBlock(body)
	if err != nil {
		return nil, err
	}
	if err := m.agrees(a); err != nil {
		return nil, err
	}
	if err := checkPart(a, m.chained()); err != nil {
		return nil, err
	}
	return a, nil
}

// marker is an archive comment's hidden marker, read.
type marker struct {
	issue       int64
	phase       string // sanitized
	part, parts int
	sha256      string
	// A chained part's link, key, signature and count; prev is "" before
	// chaining.
	prev, kid, sig string
	count          int
}

// chained reports format 2.
func (m marker) chained() bool { return m.prev != "" }

// parseMarker reads the last archive marker of body.
func parseMarker(body string) (marker, error) {
	marks := markerRE.FindAllStringSubmatch(body, -1)
	if len(marks) == 0 {
		return marker{}, ErrNotArchive
	}
	s := marks[len(marks)-1]
	m := marker{phase: s[2], sha256: s[5], prev: s[6], kid: s[8], sig: s[9]}
	var err1, err2, err3, err4 error
	m.issue, err1 = strconv.ParseInt(s[1], 10, 64)
	m.part, err2 = strconv.Atoi(s[3])
	m.parts, err3 = strconv.Atoi(s[4])
	if m.chained() {
		m.count, err4 = strconv.Atoi(s[7])
	}
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return marker{}, fmt.Errorf("archive: bad marker: %w", err)
	}
	return m, nil
}

// parseBlock reads body's last ```json block, with its format.
func parseBlock(body string) (*Archive, error) {
	blocks := jsonRE.FindAllStringSubmatch(body, -1)
	if len(blocks) == 0 {
		return nil, errors.New("archive: the marker is there but the ```json block is missing")
	}
	var j struct {
		Format int `json:"gns_archive"`
		Archive
	}
	if err := json.Unmarshal([]byte(blocks[len(blocks)-1][1]), &j); err != nil {
		return nil, fmt.Errorf("archive: the JSON block cannot be read: %w", err)
	}
	j.Archive.Format = j.Format
	return &j.Archive, nil
}

// agrees checks the format, then every field the marker repeats.
func (m marker) agrees(a *Archive) error {
	switch {
	case a.Format != FormatVersion && a.Format != legacyFormat:
		return fmt.Errorf("archive: gns_archive is %d; this version reads %d and %d", a.Format, legacyFormat, FormatVersion)
	case m.chained() != (a.Format == FormatVersion):
		return fmt.Errorf("archive: the marker and the JSON (gns_archive %d) disagree on the format", a.Format)
	case a.Issue != m.issue:
		return fmt.Errorf("archive: the marker says issue %d, the JSON %d", m.issue, a.Issue)
	case SanitizePhase(a.Phase) != m.phase:
		return fmt.Errorf("archive: the marker's phase %q does not match the JSON's", m.phase)
	case a.Part != m.part || a.Parts != m.parts:
		return fmt.Errorf("archive: the marker says part %d/%d, the JSON %d/%d", m.part, m.parts, a.Part, a.Parts)
	case a.SHA256 != m.sha256:
		return errors.New("archive: the marker's sha256 differs from the JSON's")
	case m.chained() && (a.Prev != m.prev || a.Count != m.count || a.Kid != m.kid || a.Sig != m.sig):
		return errors.New("archive: the marker's prev, count, kid or sig differs from the JSON's")
	}
	return nil
}

// checkPart checks the key named, part and sequence numbers, entries in
// range.
func checkPart(a *Archive, chained bool) error {
	switch {
	case chained && (a.Kid != "") != (len(a.Sig) == 128):
		return errors.New("archive: an Ed25519 signature (128 hex digits) must name its key (kid), and only one may")
	case a.Parts < 1 || a.Part < 1 || a.Part > a.Parts:
		return fmt.Errorf("archive: part %d/%d is out of range", a.Part, a.Parts)
	case a.FirstSeq < 1:
		return fmt.Errorf("archive: first_seq is %d; it counts from 1", a.FirstSeq)
	case len(a.Entries) == 0:
		return errors.New("archive: the part holds no entries")
	case chained && a.Count < len(a.Entries):
		return fmt.Errorf("archive: count is %d, fewer than the %d entries the part holds", a.Count, len(a.Entries))
	}
	return nil
}

// Verify checks that parts are exactly the parts 1..n of one archive (one
// hash, the same issue, phase and budget, consecutive sequence numbers) and
// that the sha256 recomputed over their entries matches.
func Verify(parts []*Archive) error {
	if len(parts) == 0 {
		return errors.New("archive: no parts")
	}
	ps := slices.Clone(parts)
	slices.SortStableFunc(ps, func(a, b *Archive) int { return a.Part - b.Part })
	first := ps[0]
	var missing []string
	have := make(map[int]bool, len(ps))
	for _, p := range ps {
		switch {
		case p.SHA256 != first.SHA256:
			return fmt.Errorf("archive: parts of different archives (sha256 %.12s… and %.12s…)", first.SHA256, p.SHA256)
		case p.Parts != first.Parts || p.Issue != first.Issue || p.Phase != first.Phase || !p.Budget.equal(first.Budget):
			return fmt.Errorf("archive %.12s…: part %d/%d disagrees with part %d/%d on the issue, phase, budget or number of parts",
				first.SHA256, p.Part, p.Parts, first.Part, first.Parts)
		case have[p.Part]:
			return fmt.Errorf("archive %.12s…: part %d/%d appears twice", first.SHA256, p.Part, p.Parts)
		}
		have[p.Part] = true
	}
	for i := 1; i <= first.Parts; i++ {
		if !have[i] {
			missing = append(missing, strconv.Itoa(i))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("archive %.12s…: part(s) %s of %d missing", first.SHA256, strings.Join(missing, ", "), first.Parts)
	}
	var all []Entry
	for _, p := range ps {
		if p.FirstSeq != len(all)+1 {
			return fmt.Errorf("archive %.12s…: part %d/%d starts at entry %d, expected %d", first.SHA256, p.Part, p.Parts, p.FirstSeq, len(all)+1)
		}
		all = append(all, p.Entries...)
	}
	if h := Hash(first.Issue, first.Phase, first.Budget, all); h != first.SHA256 {
		return fmt.Errorf("archive %.12s…: the entries hash to %.12s…, not to the sha256 the archive carries: it was edited", first.SHA256, h)
	}
	return nil
}
