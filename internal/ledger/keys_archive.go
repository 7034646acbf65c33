package ledger

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"

	"github.com/gns-guard/gns-guard/internal/prune"
)

// archiveKeys sign and verify parts: the records' Ed25519 pair, plus
// HMAC-SHA256 secrets for older parts.
type archiveKeys struct{ k Keys }

// ArchiveSigner is nil without ledger-key: parts are written unsigned.
func (k Keys) ArchiveSigner() prune.Signer {
	if k.sign == nil {
		return nil
	}
	return archiveKeys{k}
}

// ArchiveVerifier uses every key; nil when none is set.
func (k Keys) ArchiveVerifier() prune.Verifier {
	if !k.Any() {
		return nil
	}
	return archiveKeys{k}
}

// KeyID is the id of the signing key.
func (a archiveKeys) KeyID() string { return a.k.kid }

// Sign signs message with the Ed25519 key of ledger-key.
func (a archiveKeys) Sign(message []byte) []byte { return ed25519.Sign(a.k.sign, message) }

// KeyIDs are the ids of the keys that verify.
func (a archiveKeys) KeyIDs() []string { return a.k.KeyIDs() }

// Verify checks an Ed25519 signature with key kid.
func (a archiveKeys) Verify(kid string, message, sig []byte) (valid, held bool) {
	pub, ok := a.k.verify[kid]
	if !ok {
		return false, false
	}
	return len(sig) == ed25519.SignatureSize && ed25519.Verify(pub, message, sig), true
}

// VerifyMAC checks an HMAC-SHA256 under each ledger-key secret held.
func (a archiveKeys) VerifyMAC(message, mac []byte) (valid, held bool) {
	for _, secret := range a.k.hmac {
		m := hmac.New(sha256.New, secret)
		m.Write(message)
		if hmac.Equal(mac, m.Sum(nil)) {
			return true, true
		}
	}
	return false, len(a.k.hmac) > 0
}

// PublicKeys only verify, in `gns-guard pubkey` text form; one per
// rotated-out key.
func PublicKeys(texts ...string) (Keys, error) {
	var keys Keys
	for i, text := range texts {
		if _, err := ParsePublicKey(text); err != nil {
			return Keys{}, fmt.Errorf("public key %d of %d: %w", i+1, len(texts), err)
		}
		k, err := NewKeys(nil, nil, text)
		if err != nil {
			return Keys{}, err
		}
		if i == 0 {
			keys = k
			continue
		}
		for id, pub := range k.verify {
			keys.verify[id] = pub
		}
	}
	return keys, nil
}
