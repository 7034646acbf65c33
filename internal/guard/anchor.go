package guard

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// Anchor seals the guard's newest ledger record where no issue writer can
// write: a repository Actions variable (AnchorName), which only the
// repository's owner (or a site admin) may write, set with admin-token
// every time the guard writes a record. Every run checks the record it
// finds against it, so a copy of an older status comment put back (a
// rollback) or a deleted one (a reset) shows, however soon after the
// guard's write it happens (docs/ledger.md, "The anchor").
//
// It is also the pointer a clean pass follows: the status comment's id,
// and a time since which every comment the next run needs was updated
// (the last comments, the status comment), so one request for the
// comments updated since then replaces a search of the timeline. The
// pointer is verified, never trusted alone: the comments it names must be
// there.
type Anchor struct {
	// Repo and Issue say whose anchor it is.
	Repo  int64 `json:"repo"`
	Issue int64 `json:"issue"`
	// Seq and Record are the sequence number and the SHA-256 of the newest
	// record the guard wrote (its whole hidden line).
	Seq    int64  `json:"seq"`
	Record string `json:"record"`
	// Status is the id of the comment that holds the record.
	Status int64 `json:"status"`
	// Since is a time (Unix seconds) at or before the last update of the
	// status comment and of every comment in Tail.
	Since int64 `json:"since"`
	// Tail are the ids of the issue's last comments when the record was
	// written, oldest first (at most RecentWindow; all of them on a short
	// issue, First then true).
	Tail  []int64 `json:"tail"`
	First bool    `json:"first,omitempty"`
}

// AnchorName is the repository variable that holds issue n's anchor.
func AnchorName(n int64) string { return "GNS_GUARD_ANCHOR_" + strconv.FormatInt(n, 10) }

// RecordHash is the SHA-256 of a record line, in hex.
func RecordHash(line string) string {
	sum := sha256.Sum256([]byte(line))
	return hex.EncodeToString(sum[:])
}

// anchorText matches an anchor: its JSON (no newline), the key's id and
// the signature.
var anchorText = regexp.MustCompile(`^gns-guard:anchor v1 (\{[^\n]*\}) kid=([0-9a-f]{16}|-) sig=([0-9a-f]{128}|unsigned)$`)

// EncodeAnchor renders an anchor, signed with the Ed25519 key of the
// ledger-key secret when it is set (as records are).
func EncodeAnchor(a Anchor, secret []byte) string {
	data, _ := json.Marshal(a) // plain fields always marshal
	kid, sig := signWith(secret, anchorMessage(data))
	return fmt.Sprintf("gns-guard:anchor v1 %s kid=%s sig=%s", data, kid, sig)
}

func anchorMessage(data []byte) []byte {
	return append([]byte("gns-guard anchor v1\n"), data...)
}

// ReadAnchor reads and verifies the anchor of issue n of repository repo
// (0: not known) from its variable's text. A problem says in one sentence
// why the text is not an anchor the guard wrote.
func ReadAnchor(text string, repo, n int64, keys LedgerKeys) (*Anchor, string) {
	name := AnchorName(n)
	m := anchorText.FindStringSubmatch(text)
	if m == nil {
		return nil, fmt.Sprintf("the repository variable %s does not hold an anchor the guard wrote: someone with the owner's rights changed it", name)
	}
	if keys.Any() {
		if m[3] == unsigned {
			return nil, fmt.Sprintf("the anchor in the repository variable %s is not signed although ledger-key is set: someone with the owner's rights replaced it", name)
		}
		pub, ok := keys.verify[m[2]]
		if !ok {
			return nil, fmt.Sprintf("the anchor in the repository variable %s is signed with key %s, which this workflow does not hold (it holds %s): a key problem, not an edit — after changing ledger-key, set ledger-key-previous to the old key",
				name, m[2], strings.Join(keys.KeyIDs(), ", "))
		}
		raw, err := hex.DecodeString(m[3])
		if err != nil || !ed25519.Verify(pub, anchorMessage([]byte(m[1])), raw) {
			return nil, fmt.Sprintf("the anchor in the repository variable %s does not verify against key %s: someone with the owner's rights changed it", name, m[2])
		}
	}
	var a Anchor
	if err := json.Unmarshal([]byte(m[1]), &a); err != nil {
		return nil, fmt.Sprintf("the anchor in the repository variable %s cannot be read: someone with the owner's rights changed it", name)
	}
	if a.Issue != n || (repo != 0 && a.Repo != 0 && a.Repo != repo) {
		return nil, fmt.Sprintf("the anchor in the repository variable %s belongs to another issue or repository: someone with the owner's rights copied it", name)
	}
	return &a, ""
}

// AnchorState is what a run knows of the issue's anchor.
type AnchorState struct {
	// Known says the run knows whether the issue has an anchor: the runner
	// handed the variable over, or admin-token read it. Without it the
	// record is trusted by its signature alone.
	Known bool
	// Text is the variable's value ("" when there is none).
	Text string
	// Writable says the run can write the anchor (admin-token is set).
	Writable bool
}

// judgeAnchor checks the ledger record found (l, from the status comment
// found, nil for none) against the issue's anchor. It returns the anchor
// (nil when there is none or it is not the guard's), a problem that makes
// the record untrusted, and whether the record is newer than the anchor
// (its last write failed).
func (e *eval) judgeAnchor(l *Ledger) (a *Anchor, problem string, lags bool) {
	st := e.in.Anchor
	if !st.Known || st.Text == "" {
		return nil, "", false
	}
	n := e.in.Issue.Number
	a, problem = ReadAnchor(st.Text, e.in.Issue.RepoID, n, ConfigKeys(e.cfg))
	if problem != "" {
		return nil, problem, false
	}
	status := e.in.Status
	switch {
	case status == nil:
		return a, fmt.Sprintf("the guard's status comment, which holds its ledger, is gone, although its anchor (the repository variable %s) seals record %d in comment %d: someone deleted it",
			AnchorName(n), a.Seq, a.Status), false
	case l == nil:
		return a, "", false // the record's own problem is reported
	case l.Seq < a.Seq:
		return a, fmt.Sprintf("the ledger record in comment %d is record %d, older than record %d the guard wrote last (its anchor, the repository variable %s, says so): someone put back an old copy of the guard's comment",
			status.ID, l.Seq, a.Seq, AnchorName(n)), false
	case l.Seq == a.Seq && RecordHash(LedgerLine(status.Body)) != a.Record:
		return a, fmt.Sprintf("the ledger record in comment %d is not the record %d its anchor (the repository variable %s) seals: someone replaced it",
			status.ID, a.Seq, AnchorName(n)), false
	case l.Seq == a.Seq && status.ID != a.Status:
		return a, fmt.Sprintf("the ledger record in comment %d belongs in comment %d, as its anchor (the repository variable %s) says: someone copied the guard's comment",
			status.ID, a.Status, AnchorName(n)), false
	}
	return a, "", l.Seq > a.Seq
}

// NextAnchor is the anchor a run leaves after writing the record line
// into the status comment status (as the server answered the write), the
// comments of the issue being recent (the last ones, oldest first, the
// status comment among them or not) and first saying they are all of them.
func NextAnchor(in Input, seq int64, line string, status issues.Comment, recent []issues.Comment, first bool) Anchor {
	tail := lastN(recent, in.Config.RecentWindow())
	a := Anchor{Repo: in.Issue.RepoID, Issue: in.Issue.Number, Seq: seq, Record: RecordHash(line), Status: status.ID, First: first && len(tail) == len(recent)}
	since := status.UpdatedAt
	for _, c := range tail {
		a.Tail = append(a.Tail, c.ID)
		if c.UpdatedAt.Before(since) && !c.UpdatedAt.IsZero() {
			since = c.UpdatedAt
		}
	}
	a.Since = since.Add(-time.Second).Unix()
	return a
}

// AnchorWrite says whether the run must write the anchor: it can, and the
// anchor it found is not next (nil when it found none).
func AnchorWrite(st AnchorState, keys LedgerKeys, next Anchor, secret []byte) (string, bool) {
	if !st.Writable {
		return "", false
	}
	text := EncodeAnchor(next, secret)
	if st.Known && st.Text == text {
		return "", false
	}
	return text, true
}

// LabelsMoved reports whether the issue's governance labels differ from
// those the record accepted (by id and name), or an approval label it
// holds pending is off: the run must read who changed them.
func LabelsMoved(l *Ledger, is issues.Issue, cfg issues.Config) bool {
	e := &eval{cfg: cfg, in: Input{Issue: is}}
	names := is.LabelNames()
	if !slices.Equal(e.governanceLabels(names), l.Labels) {
		return true
	}
	for _, p := range l.Pending {
		if !slices.Contains(names, p) {
			return true
		}
	}
	return false
}

// anchorFloor keeps the sequence of the next record above the anchor's:
// a record written after one the anchor sealed was lost (deleted, or put
// back to an older copy) is newer than the anchor, never taken for a
// replay.
func (e *eval) anchorFloor(l *Ledger) {
	if a := e.trust.anchor; a != nil && l.Seq < a.Seq {
		l.Seq = a.Seq
	}
}
