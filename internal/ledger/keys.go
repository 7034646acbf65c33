package ledger

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/gns-guard/gns-guard/internal/config"
)

// Keys sign and verify the guard's ledger records. The signing key
// is an Ed25519 key pair derived from the secret ledger-key, so anyone
// holding only its public key (ledger-public-key) verifies a record; every
// key has an id, which a record names. Records of the first format,
// HMAC-signed with the secret itself, still verify under it.
type Keys struct {
	sign   ed25519.PrivateKey // nil: records are written unsigned
	kid    string
	verify map[string]ed25519.PublicKey
	hmac   [][]byte // secrets that verify first-format records
}

// publicKeyPrefix starts a public key's text form.
const publicKeyPrefix = "ed25519:"

// signingKey derives the Ed25519 key pair of a ledger-key secret.
func signingKey(secret []byte) ed25519.PrivateKey {
	seed := sha256.Sum256(append([]byte("gns-guard ledger-key ed25519 v2\n"), secret...))
	return ed25519.NewKeyFromSeed(seed[:])
}

// KeyID is the key's SHA-256, first 8 bytes, hex.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// PublicKey is ledger-public-key's text: "ed25519:" and standard base64.
func PublicKey(secret []byte) string {
	return publicKeyPrefix + base64.StdEncoding.EncodeToString(signingKey(secret).Public().(ed25519.PublicKey))
}

// ParsePublicKey reads a public key's text form.
func ParsePublicKey(text string) (ed25519.PublicKey, error) {
	b64, ok := strings.CutPrefix(strings.TrimSpace(text), publicKeyPrefix)
	raw, err := base64.StdEncoding.DecodeString(b64)
	if !ok || err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, errors.New(`expected "ed25519:" and 44 characters of base64, as gns-guard pubkey prints it`)
	}
	return ed25519.PublicKey(raw), nil
}

// NewKeys: current signs; previous (rotated out) and public only verify. Any
// may be empty.
func NewKeys(current, previous []byte, public string) (Keys, error) {
	k := Keys{verify: map[string]ed25519.PublicKey{}}
	for i, secret := range [][]byte{current, previous} {
		if len(secret) == 0 {
			continue
		}
		priv := signingKey(secret)
		pub := priv.Public().(ed25519.PublicKey)
		k.verify[KeyID(pub)] = pub
		k.hmac = append(k.hmac, secret)
		if i == 0 {
			k.sign, k.kid = priv, KeyID(pub)
		}
	}
	if public != "" {
		pub, err := ParsePublicKey(public)
		if err != nil {
			return k, fmt.Errorf("ledger-public-key: %w", err)
		}
		k.verify[KeyID(pub)] = pub
	}
	return k, nil
}

// ConfigKeys are the configuration's ledger keys; a malformed
// ledger-public-key (refused when the configuration is read) is left out.
// A stand-in (config.Config.LedgerStandIn) signs, and verifies what it
// signed, only when some key verifies and ledger-key is not held; it
// verifies no record of the first format (HMAC).
func ConfigKeys(c config.Config) Keys {
	id := string(c.LedgerKey) + "\x00" + string(c.LedgerKeyPrevious) + "\x00" + c.LedgerPublicKey + "\x00" + string(c.LedgerStandIn)
	if k, ok := configKeys.Load(id); ok {
		return k.(Keys)
	}
	k := configKeysOf(c)
	configKeys.Store(id, k)
	return k
}

// configKeys caches ConfigKeys by material: derived once, read-only after.
var configKeys sync.Map

func configKeysOf(c config.Config) Keys {
	k, _ := NewKeys(c.LedgerKey, c.LedgerKeyPrevious, c.LedgerPublicKey)
	if k.Any() && !k.Signs() && len(c.LedgerStandIn) > 0 {
		priv := signingKey(c.LedgerStandIn)
		pub := priv.Public().(ed25519.PublicKey)
		k.sign, k.kid = priv, KeyID(pub)
		k.verify[k.kid] = pub
	}
	return k
}

// Fingerprint lists key ids, signer first, and first-format secrets.
func (k Keys) Fingerprint() string {
	ids := k.KeyIDs()
	return fmt.Sprintf("%s|%s|%d", k.kid, strings.Join(ids, ","), len(k.hmac))
}

// Any: some key is set, so unsigned records are untrusted.
func (k Keys) Any() bool { return len(k.verify) > 0 }

// Signs says records are signed (ledger-key is set).
func (k Keys) Signs() bool { return k.sign != nil }

// KeyIDs are the verifying keys' ids, sorted.
func (k Keys) KeyIDs() []string { return slices.Sorted(maps.Keys(k.verify)) }

// SigningKeyID is "" when records are written unsigned.
func (k Keys) SigningKeyID() string { return k.kid }

// SecretKeys are one ledger-key secret's keys; none for nil.
func SecretKeys(secret []byte) Keys {
	k, _ := NewKeys(secret, nil, "")
	return k
}
