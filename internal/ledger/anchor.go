package ledger

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Anchor seals the guard's newest record in a repository Actions variable
// (AnchorName) only the owner may write, so a rollback or reset of the
// status comment shows (docs/ledger.md#the-anchor). It also points a clean
// pass at the status comment and the time since which every comment it
// needs was updated: one request, verified, instead of a timeline search.
type Anchor struct {
	// Repo and Issue say whose anchor it is.
	Repo  int64 `json:"repo"`
	Issue int64 `json:"issue"`
	// Seq and Record name the newest record; Record is its line's SHA-256.
	Seq    int64  `json:"seq"`
	Record string `json:"record"`
	// Status is the id of the comment holding the record.
	Status int64 `json:"status"`
	// Since (Unix seconds) precedes the last update of Status and Tail.
	Since int64 `json:"since"`
	// Tail are the last comment ids, oldest first, at most RecentWindow (all
	// when First).
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

// anchorText captures the JSON, the key id and the signature.
var anchorText = regexp.MustCompile(`^gns-guard:anchor v1 (\{[^\n]*\}) kid=([0-9a-f]{16}|-) sig=([0-9a-f]{128}|unsigned)$`)

// EncodeAnchor signs with ledger-key's Ed25519 key when set.
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
func ReadAnchor(text string, repo, n int64, keys Keys) (*Anchor, string) {
	name := AnchorName(n)
	m := anchorText.FindStringSubmatch(text)
	if m == nil {
		return nil, fmt.Sprintf("the repository variable %s does not hold an anchor the guard wrote: someone with the owner's rights changed it", name)
	}
	if problem := verifyVariable("the anchor", name, m[2], m[3], anchorMessage([]byte(m[1])), keys); problem != "" {
		return nil, problem
	}
	var a Anchor
	if err := json.Unmarshal([]byte(m[1]), &a); err != nil {
		return nil, fmt.Sprintf("the anchor in the repository variable %s cannot be read: someone with the owner's rights changed it", name)
	}
	if a.Issue != n || (repo != 0 && a.Repo != 0 && a.Repo != repo) {
		return nil, fmt.Sprintf("the anchor in the repository variable %s belongs to another issue or repository: someone with the "+
			"owner's rights copied it", name)
	}
	return &a, ""
}

// verifyVariable verifies the signature sig of key kid over msg, read
// from the repository variable name, which holds what (the anchor, the
// grant list): a problem in one sentence, "" when it verifies (or no key
// is set: then nothing is signed).
func verifyVariable(what, name, kid, sig string, msg []byte, keys Keys) string {
	if !keys.Any() {
		return ""
	}
	if sig == unsigned {
		return fmt.Sprintf("%s in the repository variable %s is not signed although ledger-key is set: someone with the owner's rights "+
			"replaced it", what, name)
	}
	pub, ok := keys.verify[kid]
	if !ok {
		return fmt.Sprintf("%s in the repository variable %s is signed with key %s, which this workflow does not hold (it holds %s): a "+
			"key problem, not an edit — after changing ledger-key, set ledger-key-previous to the old key",
			what, name, kid, strings.Join(keys.KeyIDs(), ", "))
	}
	raw, err := hex.DecodeString(sig)
	if err != nil || !ed25519.Verify(pub, msg, raw) {
		return fmt.Sprintf("%s in the repository variable %s does not verify against key %s: someone with the owner's rights changed it", what, name, kid)
	}
	return ""
}

// variableKey ends a signed variable: anchor, grant list, label pins.
var variableKey = regexp.MustCompile(` kid=([0-9a-f]{16}|-) sig=(?:[0-9a-f]{128}|unsigned)$`)

// SignAnew says a signed variable's text was signed by a rotated-out key
// (ledger-key-previous): the guard signs it anew so the next run, holding
// the new key alone, verifies it (docs/ledger.md#rotating-the-key). Without
// a signing key or text, there is nothing to do.
func SignAnew(text string, keys Keys) bool {
	m := variableKey.FindStringSubmatch(text)
	return keys.Signs() && m != nil && m[1] != keys.kid
}

// AnchorState is what a run knows of the issue's anchor.
type AnchorState struct {
	// Known: the runner handed it over or admin-token read it; else trust
	// the signature alone.
	Known bool
	// Text is the variable's value ("" when there is none).
	Text string
	// Writable says admin-token is set.
	Writable bool
}

// AnchorWrite: the run can write, and the found anchor (nil: none) is not
// next.
func AnchorWrite(st AnchorState, keys Keys, next Anchor, secret []byte) (string, bool) {
	if !st.Writable {
		return "", false
	}
	text := EncodeAnchor(next, secret)
	if st.Known && st.Text == text {
		return "", false
	}
	return text, true
}
