package ledger

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// Record is the guard's ledger of an issue: the checkpoint state, labels
// (by id) and history it accepted, and the labels waiting for a person. It
// is a hidden line in the status comment, signed with a key derived from
// ledger-key, and every run judges the issue against it (docs/contract.md
// §4b).
type Record struct {
	// Repo is the repository's id: a key may sign an organisation's.
	Repo int64 `json:"repo,omitempty"`
	// Issue stops a record copied from another issue verifying.
	Issue int64 `json:"issue"`
	// Seq grows with every record on the issue.
	Seq int64 `json:"seq,omitempty"`
	// Baseline is false until a state is accepted.
	Baseline bool `json:"baseline"`
	// The accepted checkpoint: version, issue and phase, and the budget.
	Version         int64  `json:"version"`
	CheckpointIssue int64  `json:"cp_issue"`
	Phase           string `json:"phase"`
	Total           int64  `json:"total"`
	Consumed        int64  `json:"consumed"`
	Remaining       int64  `json:"remaining"`
	// Earlier is earlier phases' accepted consumption
	// (docs/pruning.md#lifetime-spend).
	Earlier int64 `json:"earlier,omitempty"`
	// Task and Title are the digests (TaskDigest) of the body's task
	// section and of the issue's title as accepted: the person's task,
	// which only an approver changes; TaskSince is when they were accepted
	// (Unix seconds). Empty in a record from before the guard kept them:
	// the next state accepted sets them (docs/ledger.md#the-task).
	Task      string `json:"task,omitempty"`
	Title     string `json:"title,omitempty"`
	TaskSince int64  `json:"task_since,omitempty"`
	// ContentVersion when accepted: an admin's one edit since is
	// attributable.
	ContentVersion int `json:"content_version"`
	// Pending approval labels are removed only by an approver.
	Pending []string `json:"pending"`
	// Flag binds pending approvals to the flagged state (nil: none pending).
	Flag *Flag `json:"flag,omitempty"`
	// DepthLimit ("2", "n", "" for the default) and Size ("" for none) are
	// accepted; looser ones need an approver.
	DepthLimit string `json:"depth_limit"`
	Size       string `json:"size"`
	// Labels are every label on the issue when the state was accepted
	// (the governance ones, cascade::, size::, the approval labels and
	// permission::evolve-system, and every other), by id, and the approval
	// labels pending: a governance label renamed since, an ordinary one
	// renamed into a governance name, or an accepted limit removed, is a
	// change only an approver makes.
	Labels []issues.Label `json:"labels,omitempty"`
	// Entries counts every history entry accepted on the issue, archived
	// or in the body, and EntriesHash chains them all (HistoryHash);
	// ArchivedHash chains the first Archived of them, those the archives
	// hold. An accepted entry may move to an archive, never vanish or
	// change.
	Entries      int    `json:"entries,omitempty"`
	EntriesHash  string `json:"entries_hash,omitempty"`
	ArchivedHash string `json:"archived_hash,omitempty"`
	// Writer is the guard's login: anyone else's comment is not a record.
	Writer string `json:"writer"`
	// Adopted: no earlier ledger at this baseline; stays with the state.
	Adopted bool `json:"adopted,omitempty"`
	// Archive is the link (prune.Archive.Link) of the issue's last archive
	// part, and Archived the number of entries archived up to it ("" and 0
	// before the first): every part links to the one before, so this
	// commits to the whole archived history.
	Archive  string `json:"archive,omitempty"`
	Archived int    `json:"archived,omitempty"`
	// Config is the repository's configuration file as the guard read it
	// for this record, and the commit it was read at: a later run on the
	// same commit judges with it and reads no file.
	Config *ConfigStamp `json:"config,omitempty"`
	// Posture is judged at a commit: a later run there reports it and reads
	// nothing.
	Posture *PostureStamp `json:"posture,omitempty"`
	// Results are the agent results accepted since the last archive (at
	// most MaxResults, the newest), and Seen what the run that wrote the
	// record saw of the issue's comments (not part of the state: a clean
	// pass keeps an older one): an accepted result deleted or edited is
	// tampering (docs/ledger.md#accepted-results).
	Results []ResultRef   `json:"results,omitempty"`
	Seen    *CommentsSeen `json:"seen,omitempty"`
	// Access is who can write the issue (docs/ledger.md#who-can-write).
	Access *AccessStamp `json:"access,omitempty"`
	// Written is server time (Unix seconds) just before the write.
	Written int64 `json:"written"`
	// Read is the server's time (Unix seconds) when the run that wrote the
	// record read the issue (0 in records from before it was kept): label
	// changes older than it were judged by that run and are attributed to
	// no one now; a change between the read and the write is the next
	// run's to attribute (JudgedUntil).
	Read int64 `json:"read,omitempty"`
	// Burn keeps MaxBurnPoints accepted states for the chart, past pruning.
	Burn []BurnPoint `json:"burn,omitempty"`
	// Grants are the budgets granted to the issue within
	// repository-budget-window when it last was granted one (its baseline,
	// a raise an approver accepted): the repository's grant list must hold
	// them, and a run that finds one missing (a write lost to a concurrent
	// run's) writes it again.
	Grants []Grant `json:"grants,omitempty"`
}

// JudgedUntil is when the run read the issue; in older records, when it
// wrote.
func (l Record) JudgedUntil() time.Time {
	if l.Read > 0 && l.Read <= l.Written {
		return time.Unix(l.Read, 0)
	}
	return time.Unix(l.Written, 0)
}

// SameState ignores when records were written and their sequence number.
func (l Record) SameState(o Record) bool {
	return l.sameOrigin(o) && l.sameCheckpoint(o) && l.sameLabels(o) && l.sameHistory(o)
}

// sameOrigin: whose record, and how its state was taken.
func (l Record) sameOrigin(o Record) bool {
	return l.Repo == o.Repo && l.Issue == o.Issue && l.Writer == o.Writer &&
		l.Baseline == o.Baseline && l.Adopted == o.Adopted && l.Config.Equal(o.Config) && slices.Equal(l.Grants, o.Grants) &&
		l.Posture.Equal(o.Posture) && l.Access.Equal(o.Access)
}

// sameCheckpoint compares the accepted checkpoint and the body's content
// version.
func (l Record) sameCheckpoint(o Record) bool {
	return l.Version == o.Version && l.CheckpointIssue == o.CheckpointIssue && l.Phase == o.Phase &&
		l.Total == o.Total && l.Consumed == o.Consumed && l.Remaining == o.Remaining &&
		l.Earlier == o.Earlier && l.ContentVersion == o.ContentVersion &&
		l.Task == o.Task && l.Title == o.Title && l.TaskSince == o.TaskSince
}

// sameLabels: labels, limits and pending approvals, with their state.
func (l Record) sameLabels(o Record) bool {
	return slices.Equal(l.Pending, o.Pending) && l.DepthLimit == o.DepthLimit && l.Size == o.Size &&
		slices.Equal(l.Labels, o.Labels) && l.Flag.Equal(o.Flag)
}

// Flag is what an approver's label removal accepts
// (docs/ledger.md#approvals).
type Flag struct {
	// ContentVersion is after the guard's own body write.
	ContentVersion int `json:"cv"`
	// State is StateDigest; Labels is LabelsDigest.
	State  string `json:"state"`
	Labels string `json:"labels"`
}

// Equal holds for two nil flags.
func (f *Flag) Equal(o *Flag) bool {
	if f == nil || o == nil {
		return f == o
	}
	return *f == *o
}

// Digest is a 128-bit hex SHA-256 of parts as a JSON list, so lists never
// collide.
func Digest(parts []string) string {
	data, _ := json.Marshal(parts) // strings always marshal
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// sameHistory compares the accepted history and the archive chain's end.
func (l Record) sameHistory(o Record) bool {
	return l.Entries == o.Entries && l.EntriesHash == o.EntriesHash && l.ArchivedHash == o.ArchivedHash &&
		l.Archive == o.Archive && l.Archived == o.Archived && slices.Equal(l.Results, o.Results)
}

// ConfigStamp is .gitea/gns-guard.yml as a run read it: the default
// branch's commit and the settings as text. Only code writers change the
// file, so a run for the same commit takes the settings from the signed
// record without a request.
type ConfigStamp struct {
	// Commit is GITHUB_SHA on the default branch; "" when unknown.
	Commit string `json:"commit"`
	// Found: the file exists; Values are settings by name.
	Found  bool              `json:"found"`
	Values map[string]string `json:"values,omitempty"`
}

// Equal holds for two nil stamps.
func (s *ConfigStamp) Equal(o *ConfigStamp) bool {
	if s == nil || o == nil {
		return s == o
	}
	return s.Commit == o.Commit && s.Found == o.Found && maps.Equal(s.Values, o.Values)
}

// ledgerRecord matches the hidden record: its format, its JSON (which
// escapes < and >, so it never holds "-->"), the signing key's id and the
// signature. The first format (v1) was HMAC-signed with the secret itself
// and names no key.
var ledgerRecord = regexp.MustCompile(
	`<!-- gns-guard:ledger (v1|v2) (\{[^\n]*?\}) (?:kid=([0-9a-f]{16}|-) )?sig=([0-9a-f]{64}|[0-9a-f]{128}|unsigned) -->`)

// unsigned is the signature when ledger-key is unset.
const unsigned = "unsigned"

// Encode signs with ledger-key's Ed25519 key when set.
func Encode(l Record, secret []byte) string { return SecretKeys(secret).Encode(l) }

// Encode signs with the keys' signing key, or writes unsigned.
func (k Keys) Encode(l Record) string {
	data, _ := json.Marshal(l) // a struct of plain fields always marshals
	kid, sig := "-", unsigned
	if k.sign != nil {
		kid, sig = k.kid, hex.EncodeToString(ed25519.Sign(k.sign, ledgerMessage(data)))
	}
	return fmt.Sprintf("<!-- gns-guard:ledger v2 %s kid=%s sig=%s -->", data, kid, sig)
}

// signWith returns key id and hex signature, or "-" and unsigned without a
// secret.
func signWith(secret, msg []byte) (kid, sig string) {
	if len(secret) == 0 {
		return "-", unsigned
	}
	priv := signingKey(secret)
	return KeyID(priv.Public().(ed25519.PublicKey)), hex.EncodeToString(ed25519.Sign(priv, msg))
}

// ledgerMessage is what a record's signature covers.
func ledgerMessage(data []byte) []byte {
	return append([]byte("gns-guard ledger v2\n"), data...)
}

func ledgerMAC(key, data []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("gns-guard ledger v1\n"))
	m.Write(data)
	return hex.EncodeToString(m.Sum(nil))
}

// Read reads and verifies the record in the status comment of issue. It
// returns the record, or one sentence on why it cannot be trusted; neither
// when there is no comment. With keys, a record needs a signature they
// verify; without, author and marker suffice (the weaker mode).
func Read(status *issues.Comment, issue int64, keys Keys) (*Record, string) {
	if status == nil {
		return nil, ""
	}
	verifications.Add(1)
	m := ledgerRecord.FindAllStringSubmatch(status.Body, -1)
	switch {
	case len(m) == 0:
		return nil, fmt.Sprintf("the guard's status comment %d carries no ledger record: someone removed it", status.ID)
	case len(m) > 1:
		return nil, fmt.Sprintf("the guard's status comment %d carries %d ledger records: someone added one", status.ID, len(m))
	}
	if problem := verifyRecord(status.ID, m[0][1], m[0][2], m[0][3], m[0][4], keys); problem != "" {
		return nil, problem
	}
	var l Record
	if err := json.Unmarshal([]byte(m[0][2]), &l); err != nil {
		return nil, fmt.Sprintf("the ledger record in comment %d cannot be read: someone changed it", status.ID)
	}
	if l.Writer != "" && status.Author != "" && l.Writer != status.Author {
		return nil, fmt.Sprintf("the ledger record in comment %d names %s as its writer, but %s posted it: someone copied it",
			status.ID, markdown.Quote(l.Writer), markdown.Quote(status.Author))
	}
	if l.Issue != issue {
		return nil, fmt.Sprintf("the ledger record in comment %d belongs to issue #%d, not #%d: someone copied it here", status.ID, l.Issue, issue)
	}
	return &l, ""
}

// verifications counts the records Read verified in this process.
var verifications atomic.Int64

// Verifications counts Read's verifications; a run verifies once
// (internal/action tests it).
func Verifications() int64 { return verifications.Load() }

// Verified is a record Read verified, with what Read judged of the
// comment it was read from (its id, author and record line) and the keys:
// a run verifies its ledger once and passes this down. The rest of the
// comment's text does not enter the verdict.
type Verified struct {
	ID      int64
	Author  string
	Line    string // Line of the comment's body
	Lines   int    // how many record lines the body holds
	Keys    string // Keys.Fingerprint of the keys it was verified with
	Record  *Record
	Problem string
}

// Verify is Read kept with its judgement; nil for no comment.
func Verify(status *issues.Comment, issue int64, keys Keys) *Verified {
	if status == nil {
		return nil
	}
	l, problem := Read(status, issue, keys)
	return &Verified{ID: status.ID, Author: status.Author, Line: Line(status.Body), Lines: len(ledgerRecord.FindAllStringIndex(
		status.Body, -1)), Keys: keys.Fingerprint(), Record: l, Problem: problem}
}

// Of: same comment, author and record line as v's, so same judgement.
func (v *Verified) Of(c *issues.Comment, keys Keys) bool {
	if v == nil || c == nil || v.ID != c.ID || v.Author != c.Author || v.Keys != keys.Fingerprint() {
		return false
	}
	if v.Line != "" {
		return v.Line == Line(c.Body)
	}
	return v.Lines == len(ledgerRecord.FindAllStringIndex(c.Body, -1))
}

// ReadOnce reuses v if status is unchanged, else Reads.
func ReadOnce(v *Verified, status *issues.Comment, issue int64, keys Keys) (*Record, string) {
	if v.Of(status, keys) {
		return v.Record, v.Problem
	}
	return Read(status, issue, keys)
}

// verifyRecord checks a record's signature under keys; "" when it holds.
func verifyRecord(id int64, format, data, kid, sig string, keys Keys) string {
	if !keys.Any() {
		return ""
	}
	if sig == unsigned {
		return fmt.Sprintf("the ledger record in comment %d is not signed although ledger-key is set: someone replaced it", id)
	}
	if format == "v1" {
		for _, secret := range keys.hmac {
			if hmac.Equal([]byte(sig), []byte(ledgerMAC(secret, []byte(data)))) {
				return ""
			}
		}
		if len(keys.hmac) == 0 {
			return fmt.Sprintf("the ledger record in comment %d is of the first format, which only ledger-key itself verifies: set "+
				"ledger-key (or ledger-key-previous) in the workflow", id)
		}
		return fmt.Sprintf("the ledger record in comment %d does not verify against ledger-key: someone changed it, or it was signed "+
			"with a key this workflow does not hold (after a rotation, set ledger-key-previous to the old key)", id)
	}
	pub, ok := keys.verify[kid]
	if !ok {
		return fmt.Sprintf("the ledger record in comment %d is signed with key %s, which this workflow does not hold (it holds %s): a "+
			"key problem, not an edit — if ledger-key was changed, set ledger-key-previous to the old key so the guard re-signs its records",
			id, kid, strings.Join(keys.KeyIDs(), ", "))
	}
	raw, err := hex.DecodeString(sig)
	if err != nil || len(raw) != ed25519.SignatureSize || !ed25519.Verify(pub, ledgerMessage([]byte(data)), raw) {
		return fmt.Sprintf("the ledger record in comment %d does not verify against key %s: someone changed it", id, kid)
	}
	return ""
}

// Line is "" for no hidden record line, or several.
func Line(body string) string {
	m := ledgerRecord.FindAllString(body, -1)
	if len(m) != 1 {
		return ""
	}
	return m[0]
}

// SignedWith reports whether the record line in a status comment's body is
// signed the way keys sign now (with the current key, or unsigned without
// one): a record a rotated-out key signed is written anew.
func SignedWith(body string, keys Keys) bool {
	m := ledgerRecord.FindStringSubmatch(body)
	if m == nil {
		return false
	}
	if !keys.Signs() {
		return m[4] == unsigned
	}
	return m[1] == "v2" && m[3] == keys.kid
}
