package receipt

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Attestation is the gate's signed word that an agent's login wrote a
// comment through it (docs/gate.md#what-the-guard-believes). The gate
// posts as its own account; the guard counts the comment as Login's.
type Attestation struct {
	Repo       string `json:"repo"`
	Issue      int64  `json:"issue"`
	Login      string `json:"login"`
	Agent      string `json:"agent"`
	Invocation string `json:"invocation"`
	// Text is the SHA-256 of the comment without its attestation line.
	Text  string `json:"text_sha256"`
	KeyID string `json:"kid"`
	Sig   string `json:"sig,omitempty"`
}

// attestDomain keeps the key's other signatures from passing for
// attestations.
const attestDomain = "gns-guard gate attestation v1\n"

// attestLine starts the hidden line that carries an attestation.
const attestLine = "<!-- gns-guard:gate "

func (a Attestation) message() []byte {
	a.Sig = ""
	data, _ := json.Marshal(a) // plain fields: never fails
	return append([]byte(attestDomain), data...)
}

// Attest signs a for comment and puts its line before the comment's last
// line (the footer, which must stay last). a.Text is filled.
func (k Key) Attest(a Attestation, comment string) string {
	comment = strings.TrimRight(comment, "\n") + "\n"
	sum := sha256.Sum256([]byte(comment))
	a.Text, a.KeyID = hex.EncodeToString(sum[:]), k.id
	a.Sig = hex.EncodeToString(ed25519.Sign(k.priv, a.message()))
	data, _ := json.Marshal(a) // escapes < and >: the line cannot close early
	line := attestLine + string(data) + " -->\n"
	body := strings.TrimSuffix(comment, "\n")
	i := strings.LastIndex(body, "\n") + 1
	return body[:i] + line + body[i:] + "\n"
}

// ReadAttestation finds comment's attestation line; rest is the comment
// without it, what the signature covers.
func ReadAttestation(comment string) (a *Attestation, rest string, ok bool) {
	start := strings.Index(comment, "\n"+attestLine)
	if start < 0 {
		return nil, "", false
	}
	start++
	end := strings.Index(comment[start:], " -->\n")
	if end < 0 {
		return nil, "", false
	}
	a = new(Attestation)
	if err := json.Unmarshal([]byte(comment[start+len(attestLine):start+end]), a); err != nil {
		return nil, "", false
	}
	rest = comment[:start] + comment[start+end+len(" -->\n"):]
	return a, strings.TrimRight(rest, "\n") + "\n", true
}

// VerifyAttestation checks comment's attestation against publicKey, for
// issue n of repo, and returns it; the error says what is wrong.
func VerifyAttestation(comment, publicKey, repo string, n int64) (*Attestation, error) {
	a, rest, ok := ReadAttestation(comment)
	if !ok {
		return nil, errors.New("the comment carries no attestation of the gate")
	}
	if strings.Count(comment, attestLine) != 1 {
		return nil, errors.New("the comment carries more than one attestation")
	}
	if err := verifySigned(publicKey, "the attestation", a.KeyID, a.Sig, a.message(), "it was changed or forged"); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(rest))
	switch {
	case hex.EncodeToString(sum[:]) != a.Text:
		return nil, errors.New("the comment was edited after the gate wrote it")
	case !strings.EqualFold(a.Repo, repo):
		return nil, fmt.Errorf("the attestation is for repository %s, not %s", a.Repo, repo)
	case a.Issue != n:
		return nil, fmt.Errorf("the attestation is for issue #%d, not #%d", a.Issue, n)
	case a.Login == "":
		return nil, errors.New("the attestation names no login")
	}
	return a, nil
}
