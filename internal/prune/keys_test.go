package prune

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"
	"testing"
)

// testKeys are a workflow's keys as the tests make them: a secret whose
// Ed25519 key signs (when sign is set), and keys that only verify.
type testKeys struct {
	sign    ed25519.PrivateKey
	kid     string
	public  map[string]ed25519.PublicKey
	secrets [][]byte
}

// newTestKeys are the keys of one secret, which signs and verifies.
func newTestKeys(secret string) *testKeys {
	seed := sha256.Sum256([]byte(secret))
	priv := ed25519.NewKeyFromSeed(seed[:])
	k := &testKeys{sign: priv, kid: testKeyID(priv.Public().(ed25519.PublicKey)), secrets: [][]byte{[]byte(secret)}}
	k.public = map[string]ed25519.PublicKey{k.kid: priv.Public().(ed25519.PublicKey)}
	return k
}

func testKeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// publicOnly are the keys a reader holds who has only the public keys.
func (k *testKeys) publicOnly() *testKeys {
	return &testKeys{public: maps.Clone(k.public)}
}

// with holds o's keys too (a rotation: o is the previous key); k still
// signs.
func (k *testKeys) with(o *testKeys) *testKeys {
	out := &testKeys{sign: k.sign, kid: k.kid, public: maps.Clone(k.public), secrets: slices.Concat(k.secrets, o.secrets)}
	maps.Copy(out.public, o.public)
	return out
}

func (k *testKeys) KeyID() string              { return k.kid }
func (k *testKeys) Sign(message []byte) []byte { return ed25519.Sign(k.sign, message) }
func (k *testKeys) KeyIDs() []string           { return slices.Sorted(maps.Keys(k.public)) }

func (k *testKeys) Verify(kid string, message, sig []byte) (bool, bool) {
	pub, ok := k.public[kid]
	if !ok {
		return false, false
	}
	return len(sig) == ed25519.SignatureSize && ed25519.Verify(pub, message, sig), true
}

func (k *testKeys) VerifyMAC(message, mac []byte) (bool, bool) {
	for _, s := range k.secrets {
		if hmac.Equal(mac, macOf(s, message)) {
			return true, true
		}
	}
	return false, len(k.secrets) > 0
}

func macOf(secret, message []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(message)
	return m.Sum(nil)
}

// signer and verifier turn nil keys into nil interfaces.
func signer(k *testKeys) Signer {
	if k == nil {
		return nil
	}
	return k
}

func verifier(k *testKeys) Verifier {
	if k == nil {
		return nil
	}
	return k
}

// hmacSigned rewrites an archive comment as the guard signed parts before
// Ed25519: an HMAC-SHA256 under the secret, and no key id. The link does
// not change.
func hmacSigned(t *testing.T, body string, secret []byte) string {
	t.Helper()
	a, err := ParseArchive(body)
	if err != nil {
		t.Fatal(err)
	}
	old := *a
	a.Kid, a.Sig = "", hex.EncodeToString(macOf(secret, a.macMessage()))
	out := strings.Replace(body, `"kid":"`+old.Kid+`",`, "", 1)
	out = strings.Replace(out, `"sig":"`+old.Sig+`"`, `"sig":"`+a.Sig+`"`, 1)
	out = replaceLast(out, Marker(&old), Marker(a))
	if p, err := ParseArchive(out); err != nil || p.Kid != "" || p.Link() != old.Link() {
		t.Fatalf("the HMAC-signed part does not read back: %v", err)
	}
	return out
}

// TestPartsSignedWithEd25519: every part names the key that signed it and
// carries its Ed25519 signature, in the marker and the JSON; it verifies
// with the public key alone, and any change to what it says fails.
func TestPartsSignedWithEd25519(t *testing.T) {
	c := threePrunes(t, testKey)
	public := testKey.publicOnly()
	for _, cm := range c.cs {
		a, err := ParseArchive(cm.Body)
		if err != nil {
			t.Fatal(err)
		}
		if a.Kid != testKey.kid || len(a.Sig) != 128 || !strings.Contains(cm.Body, " kid="+testKey.kid+" sig="+a.Sig+" -->") || !strings.Contains(cm.Body, `"kid":"`+testKey.kid+`"`) {
			t.Fatalf("comment %d: kid %q, sig %q\n%s", cm.ID, a.Kid, a.Sig, cm.Body)
		}
		if s := a.CheckSignature(public); s != SigValid {
			t.Fatalf("comment %d: %v with the public key", cm.ID, s)
		}
		for name, edit := range map[string]func(*Archive){
			"an entry":  func(b *Archive) { b.Entries[0].Action += "!" },
			"the count": func(b *Archive) { b.Count++ },
			"the prev":  func(b *Archive) { b.Prev = strings.Repeat("1", 64) },
			"the repo":  func(b *Archive) { b.Repo++ },
		} {
			b := *a
			b.Entries = slices.Clone(a.Entries)
			edit(&b)
			if s := b.CheckSignature(public); s != SigInvalid {
				t.Errorf("comment %d with %s changed: %v, want invalid", cm.ID, name, s)
			}
		}
	}
	// Unsigned parts keep the marker the first chained format had.
	u := threePrunes(t, nil)
	if a, _ := ParseArchive(u.cs[0].Body); a.Kid != "" || a.Sig != Unsigned || !strings.Contains(u.cs[0].Body, " sig=unsigned -->") || strings.Contains(u.cs[0].Body, "kid") {
		t.Errorf("an unsigned part:\n%s", u.cs[0].Body)
	}
	// The marker and the JSON must agree on the key.
	other := newTestKeys("another key")
	forged := strings.Replace(c.cs[0].Body, " kid="+testKey.kid+" ", " kid="+other.kid+" ", 1)
	if _, err := ParseArchive(forged); err == nil || !strings.Contains(err.Error(), "kid") {
		t.Errorf("a marker naming another key read: %v", err)
	}
}

// TestChainWithPublicKey: a reader holding only the public key proves the
// whole chain, signatures included; a tampered part fails its signature.
func TestChainWithPublicKey(t *testing.T) {
	c := threePrunes(t, testKey)
	chain := c.chain
	chain.Keys = testKey.publicOnly()
	got, problems := Rebuild(c.cs, "bot", testIssue, c.tail, &chain)
	if len(problems) > 0 || !slices.Equal(Entries(got), c.want) {
		t.Fatalf("problems %v; %d entries, want %d", problems, len(got), len(c.want))
	}
	cs := slices.Clone(c.cs)
	cs[2].Body = strings.Replace(cs[2].Body, `"agent":"`, `"agent":"x`, 1)
	_, problems = Rebuild(cs, "bot", testIssue, c.tail, &chain)
	hasProblem(t, problems, cs[2].ID, "signature does not verify under key "+testKey.kid, "edited or forged")
}

// TestChainRotation: after a rotation, parts the previous key signed
// verify when the verifier holds it (ledger-key-previous, or its public
// key); without it they are a key problem, named as such, never an edit.
func TestChainRotation(t *testing.T) {
	old, cur := newTestKeys("the old key"), newTestKeys("the new key")
	c := threePrunes(t, old)
	// The third archive is signed with the new key: re-plan it.
	cfg := DefaultConfig()
	cfg.MaxCommentChars = 3000
	cfg.Signer = cur
	cfg.Prev, cfg.Count = c.plans[1].Head, c.plans[1].Count
	body := spec{Total: 1000, Consumed: 900, Entries: slices.Concat(c.plans[2].Archived, c.plans[2].Kept), Tail: true}.body(t)
	res, err := Plan(body, parse(t, body), 0, nil, testNow, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The link leaves the signature out: the chain goes on unchanged.
	if res.Head != c.plans[2].Head || res.Parts[0].Kid != cur.kid || c.plans[2].Parts[0].Kid != old.kid {
		t.Fatalf("re-signed with the new key: head %.8s (was %.8s), kid %s", res.Head, c.plans[2].Head, res.Parts[0].Kid)
	}
	n := len(c.plans[2].Archives)
	cs := slices.Clone(c.cs[:len(c.cs)-n])
	for i, a := range res.Archives {
		cs = append(cs, Comment{ID: c.cs[len(c.cs)-n+i].ID, Author: "bot", Body: a})
	}
	chain := Chain{Head: res.Head, Count: res.Count, Known: true}

	for _, keys := range []*testKeys{cur.with(old), cur.with(old).publicOnly()} {
		chain.Keys = keys
		got, problems := Rebuild(cs, "bot", testIssue, c.tail, &chain)
		if len(problems) > 0 || len(got) != len(c.want) {
			t.Errorf("keys %v: %v", keys.KeyIDs(), problems)
		}
	}
	for _, keys := range []*testKeys{cur, cur.publicOnly()} {
		chain.Keys = keys
		got, problems := Rebuild(cs, "bot", testIssue, c.tail, &chain)
		for _, p := range problems {
			if !strings.Contains(p.Message, "is signed by key "+old.kid+", which this workflow does not hold (it holds "+cur.kid+")") || !strings.Contains(p.Message, "not an edit") {
				t.Errorf("without the old key: %s", p)
			}
		}
		if len(problems) != len(cs)-n {
			t.Errorf("without the old key: %d problems, want one per part the old key signed (%d)", len(problems), len(cs)-n)
		}
		// The chain still proves the history.
		if !slices.Equal(Entries(got), c.want) {
			t.Errorf("without the old key: %d entries, want %d", len(got), len(c.want))
		}
	}
	// Extend does not follow a part it cannot verify.
	if _, _, followed, _ := Extend(c.plans[1].Head, c.plans[1].Count, parts(t, cs), cur.with(old), nil); len(followed) != n {
		t.Errorf("with both keys, %d parts followed, want %d", len(followed), n)
	}
	if _, _, followed, _ := Extend(c.plans[0].Head, c.plans[0].Count, parts(t, cs), cur, nil); len(followed) != 0 {
		t.Errorf("a part of an unknown key was followed")
	}
}

// TestChainLegacyHMAC: parts signed before Ed25519 (HMAC-SHA256 under the
// secret, no key id) verify under the secret; with only the public key
// they are proven by the chain, with a note; an edited one still fails.
func TestChainLegacyHMAC(t *testing.T) {
	c := threePrunes(t, testKey)
	cs := slices.Clone(c.cs)
	n1 := len(c.plans[0].Archives)
	for i := range n1 {
		cs[i].Body = hmacSigned(t, cs[i].Body, testKey.secrets[0])
	}
	chain := c.chain
	chain.Keys = testKey
	if got, problems := Rebuild(cs, "bot", testIssue, c.tail, &chain); len(problems) > 0 || !slices.Equal(Entries(got), c.want) {
		t.Fatalf("under the secret: %v", problems)
	}
	chain.Keys = testKey.publicOnly()
	got, problems := Rebuild(cs, "bot", testIssue, c.tail, &chain)
	if !slices.Equal(Entries(got), c.want) || len(problems) != n1 {
		t.Fatalf("with the public key: %d entries, %v", len(got), problems)
	}
	for _, p := range problems {
		if !p.Note || !strings.Contains(p.Message, "signed with the secret ledger-key itself") || !strings.Contains(p.Message, "proves it") {
			t.Errorf("not a note: %s", p)
		}
	}
	// A wrong secret: the HMAC does not verify.
	chain.Keys = newTestKeys("not the key")
	_, problems = Rebuild(cs, "bot", testIssue, c.tail, &chain)
	hasProblem(t, problems, cs[0].ID, "signature does not verify under the ledger key")
	// An HMAC part edited (an entry dropped, re-hashed, the old signature
	// kept): no secret checks it, and it is off the chain.
	chain.Keys = testKey.publicOnly()
	a, _ := ParseArchive(cs[1].Body)
	cs[1].Body = withSig(t, dropEntry(t, cs[1].Body), "", a.Sig)
	_, problems = Rebuild(cs, "bot", testIssue, c.tail, &chain)
	hasProblem(t, problems, cs[1].ID, "not on the chain")
	hasProblem(t, problems, cs[2].ID, "before this one", "missing")
}

// withSig sets the key id and signature of an unsigned archive comment
// (dropEntry's), in its JSON and its marker.
func withSig(t *testing.T, body, kid, sig string) string {
	t.Helper()
	js, mark := `"sig":"`+sig+`"`, " sig="+sig+" -->"
	if kid != "" {
		js, mark = `"kid":"`+kid+`",`+js, " kid="+kid+mark
	}
	out := strings.Replace(body, `"sig":"unsigned"`, js, 1)
	out = replaceLast(out, " sig=unsigned -->", mark)
	if p, err := ParseArchive(out); err != nil || p.Sig != sig || p.Kid != kid {
		t.Fatalf("the signed comment does not read back: %v", err)
	}
	return out
}

// TestChainTamperedWithPublicKey: an archive edited as an agent can (one
// entry dropped, the hash recomputed, the old signature kept) is named by
// its comment under the public key alone, and so is its successor's
// broken link.
func TestChainTamperedWithPublicKey(t *testing.T) {
	c := threePrunes(t, testKey)
	cs := slices.Clone(c.cs)
	a, err := ParseArchive(cs[3].Body)
	if err != nil {
		t.Fatal(err)
	}
	// Keep the signature and key id the part had: only the entries change.
	edited := withSig(t, dropEntry(t, cs[3].Body), a.Kid, a.Sig)
	if p, err := ParseArchive(edited); err != nil || p.Kid != a.Kid || len(p.Entries) != len(a.Entries)-1 {
		t.Fatalf("the edit does not read back: %v", err)
	}
	cs[3].Body = edited
	chain := c.chain
	chain.Keys = testKey.publicOnly()
	_, problems := Rebuild(cs, "bot", testIssue, c.tail, &chain)
	hasProblem(t, problems, cs[3].ID, "signature does not verify under key "+testKey.kid)
	hasProblem(t, problems, cs[4].ID, "before this one", "missing")
}
