package prune

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// Signer uses the ledger-key's Ed25519 key, as records do
// (ledger.Keys.ArchiveSigner).
type Signer interface {
	// KeyID is 16 hex digits, named in every part signed.
	KeyID() string
	// Sign returns the Ed25519 signature of message.
	Sign(message []byte) []byte
}

// Verifier checks the signatures of archive parts with the keys a workflow
// or a reader holds: secrets, previous secrets, published public keys
// (ledger.Keys.ArchiveVerifier). A nil Verifier, or one that holds no
// key, checks nothing: every part passes (the weaker mode, without
// ledger-key).
type Verifier interface {
	// KeyIDs are the ids of the keys held, for messages.
	KeyIDs() []string
	// Verify reports whether sig is a valid Ed25519 signature of message
	// by the key whose id is kid; held is false when no such key is held.
	Verify(kid string, message, sig []byte) (valid, held bool)
	// VerifyMAC reports whether mac is the HMAC-SHA256 of message under a
	// ledger-key secret held: how parts were signed before they were
	// signed with Ed25519. held is false when no secret is held (only
	// public keys).
	VerifyMAC(message, mac []byte) (valid, held bool)
}

// Signature is what a part's signature proves under a Verifier.
type Signature int

// The outcomes of CheckSignature.
const (
	// SigValid: verified, or the Verifier holds no key.
	SigValid Signature = iota
	// SigUnchecked: an HMAC-SHA256 signature (the first signed format) and
	// no secret to check it with: only the chain of links proves the part.
	SigUnchecked
	// SigUnknownKey: signed by a key not held; a key problem, not an edit.
	SigUnknownKey
	// SigInvalid: a key is held, but the signature fails or is missing.
	SigInvalid
)

// holds reports whether v holds any key.
func holds(v Verifier) bool { return v != nil && len(v.KeyIDs()) > 0 }

// Sign signs with s, naming its key id; nil s marks it Unsigned.
func (a *Archive) Sign(s Signer) {
	if s == nil {
		a.Kid, a.Sig = "", Unsigned
		return
	}
	a.Kid = s.KeyID()
	a.Sig = hex.EncodeToString(s.Sign(a.signedMessage()))
}

// signedMessage is all the part says but signature and key id.
func (a *Archive) signedMessage() []byte {
	return append([]byte("gns-guard archive v2 ed25519\n"), a.canonical()...)
}

// macMessage is what the first signed format's HMAC-SHA256 covers.
func (a *Archive) macMessage() []byte {
	return append([]byte("gns-guard archive v2\n"), a.canonical()...)
}

// CheckSignature says what the part's signature proves under v.
func (a *Archive) CheckSignature(v Verifier) Signature {
	if !holds(v) {
		return SigValid
	}
	if a.Format != FormatVersion || a.Sig == Unsigned {
		return SigInvalid
	}
	sig, err := hex.DecodeString(a.Sig)
	if err != nil {
		return SigInvalid
	}
	if a.Kid == "" {
		valid, held := v.VerifyMAC(a.macMessage(), sig)
		switch {
		case !held:
			return SigUnchecked
		case !valid:
			return SigInvalid
		}
		return SigValid
	}
	valid, held := v.Verify(a.Kid, a.signedMessage(), sig)
	switch {
	case !held:
		return SigUnknownKey
	case !valid:
		return SigInvalid
	}
	return SigValid
}

// Verified reports whether the part's signature verifies under v. With no
// key every chained part passes (nothing can be checked); a part written
// before chaining never does when a key is held.
func (a *Archive) Verified(v Verifier) bool { return a.CheckSignature(v) == SigValid }

// badSignature says why a part whose signature is SigInvalid fails.
func badSignature(a *Archive) string {
	what := fmt.Sprintf("archive part %d/%d (entries %s)", a.Part, a.Parts, spanText(a))
	switch {
	case a.Format != FormatVersion || a.Sig == Unsigned:
		return what + ": its signature does not verify, as it carries none although the ledger is signed: the comment was edited or forged"
	case a.Kid == "":
		return what + ": its signature does not verify under the ledger key: the comment was edited or forged"
	}
	return fmt.Sprintf("%s: its signature does not verify under key %s: the comment was edited or forged", what, a.Kid)
}

// unknownKey says a part's key is not held by v.
func unknownKey(a *Archive, v Verifier) string {
	return fmt.Sprintf("archive part %d/%d (entries %s) is signed by key %s, which this workflow does not hold (it holds %s): a key "+
		"problem, not an edit; after a rotation the old key verifies it (ledger-key-previous, or its public key with history --public-key)",
		a.Part, a.Parts, spanText(a), a.Kid, strings.Join(v.KeyIDs(), ", "))
}
