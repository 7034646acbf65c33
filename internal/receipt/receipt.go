package receipt

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Receipt is an invocation's metered total, signed by the meter.
type Receipt struct {
	// Repo is the repository, OWNER/NAME; Issue its issue.
	Repo  string `json:"repo"`
	Issue int64  `json:"issue"`
	// Invocation, Login (the Gitea caller) and Agent (spoken as) say whose
	// calls.
	Invocation string `json:"invocation"`
	Login      string `json:"login"`
	Agent      string `json:"agent,omitempty"`
	// Calls counts calls; Tokens is input (cached included) plus output.
	Calls  int64 `json:"calls"`
	Tokens int64 `json:"tokens"`
	// Input includes Cached; Output includes Reasoning.
	Input     int64 `json:"input"`
	Cached    int64 `json:"cached"`
	Output    int64 `json:"output"`
	Reasoning int64 `json:"reasoning"`
	// WorstCase is what of Tokens the meter charged calls whose usage it
	// could not read (a stream cut, a provider that never finished after
	// the client hung up): their worst case.
	WorstCase int64 `json:"worst_case,omitempty"`
	// Cost is in millionths of a dollar, by the price table.
	Cost int64 `json:"cost_micro_usd"`
	// Issued is when the meter signed it, in Unix seconds.
	Issued int64 `json:"issued"`
	// KeyID names the signing key; Sig is hex.
	KeyID string `json:"kid,omitempty"`
	Sig   string `json:"sig,omitempty"`
}

// domain keeps the key's other signatures from passing for receipts.
const domain = "gns-guard meter receipt v1\n"

// message is the receipt without signature, as JSON.
func (r Receipt) message() []byte {
	r.Sig = ""
	data, _ := json.Marshal(r) // plain fields: never fails
	return append([]byte(domain), data...)
}

// Key is the meter's signing key.
type Key struct {
	priv ed25519.PrivateKey
	id   string
}

// MinKeyBytes is 256 bits, as for ledger-key.
const MinKeyBytes = 32

// NewKey derives the signing key of a meter-key secret.
func NewKey(secret []byte) (Key, error) {
	if len(strings.TrimSpace(string(secret))) < MinKeyBytes {
		return Key{}, fmt.Errorf("meter-key must hold at least %d characters (256 bits): make one with gns-guard keygen", MinKeyBytes)
	}
	seed := sha256.Sum256(append([]byte("gns-guard meter-key ed25519 v1\n"), secret...))
	priv := ed25519.NewKeyFromSeed(seed[:])
	return Key{priv: priv, id: keyID(priv.Public().(ed25519.PublicKey))}, nil
}

// Public is meter-public-key: "ed25519:" and standard base64.
func (k Key) Public() string {
	return prefix + base64.StdEncoding.EncodeToString(k.priv.Public().(ed25519.PublicKey))
}

// Sign returns r signed.
func (k Key) Sign(r Receipt) Receipt {
	r.KeyID = k.id
	r.Sig = hex.EncodeToString(ed25519.Sign(k.priv, r.message()))
	return r
}

const prefix = "ed25519:"

// keyID is the public key's SHA-256, first 8 bytes, hex.
func keyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// ParsePublicKey reads meter-public-key.
func ParsePublicKey(text string) (ed25519.PublicKey, error) {
	b64, ok := strings.CutPrefix(strings.TrimSpace(text), prefix)
	raw, err := base64.StdEncoding.DecodeString(b64)
	if !ok || err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, errors.New(`expected "ed25519:" and 44 characters of base64, as gns-guard meter --public-key prints it`)
	}
	return ed25519.PublicKey(raw), nil
}

// verifySigned checks a signature of the meter's, of what (a receipt, a
// statement) signed with key id kid, over msg; forged says what a
// signature that does not verify means.
func verifySigned(publicKey, what, kid, sigHex string, msg []byte, forged string) error {
	pub, err := ParsePublicKey(publicKey)
	if err != nil {
		return fmt.Errorf("meter-public-key: %w", err)
	}
	if kid != keyID(pub) {
		return fmt.Errorf("%s is signed with key %s, not meter-public-key's %s", what, kid, keyID(pub))
	}
	sig, err := hex.DecodeString(sigHex)
	if err != nil || len(sig) != ed25519.SignatureSize || !ed25519.Verify(pub, msg, sig) {
		return fmt.Errorf("%s does not verify against meter-public-key: %s", what, forged)
	}
	return nil
}

// For is the carrying comment's issue and invocation.
type For struct {
	Repo       string
	Issue      int64
	Invocation string
}

// Verify's error says what is wrong, for a finding.
func Verify(r *Receipt, publicKey string, want For) error {
	if r == nil {
		return errors.New("there is no receipt")
	}
	if err := verifySigned(publicKey, "the receipt", r.KeyID, r.Sig, r.message(), "it was changed or forged"); err != nil {
		return err
	}
	switch {
	case !strings.EqualFold(r.Repo, want.Repo):
		return fmt.Errorf("the receipt is for repository %s, not %s", r.Repo, want.Repo)
	case r.Issue != want.Issue:
		return fmt.Errorf("the receipt is for issue #%d, not #%d", r.Issue, want.Issue)
	case r.Invocation != want.Invocation:
		return fmt.Errorf("the receipt is for invocation %q, not %q", r.Invocation, want.Invocation)
	case r.Tokens < 0 || r.Calls < 0:
		return errors.New("the receipt's figures are negative")
	}
	return nil
}
