package offline

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/receipt"
)

// ledgerKeyBytes is the length of a key NewKey makes: 32 random bytes,
// written as 64 hex digits.
const ledgerKeyBytes = 32

// NewKey is a new random ledger-key, in hex: the one randomness this
// package reads.
func NewKey() (string, error) {
	b := make([]byte, ledgerKeyBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("keygen: reading random bytes: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// PublicKey is the public key of a ledger-key, as ledger-public-key
// publishes it, and its key id; the error says why the secret is too weak.
func PublicKey(secret string) (public, keyID string, err error) {
	if err := ledger.CheckKey([]byte(secret)); err != nil {
		return "", "", err
	}
	return ledger.PublicKey([]byte(secret)), ledger.SecretKeys([]byte(secret)).KeyIDs()[0], nil
}

// MeterPublicKey is the public key of a meter-key, as meter-public-key
// publishes it; an error says why the secret is no key.
func MeterPublicKey(secret []byte) (string, error) {
	key, err := receipt.NewKey(secret)
	if err != nil {
		return "", err
	}
	return key.Public(), nil
}
