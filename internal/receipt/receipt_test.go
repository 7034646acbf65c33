package receipt

import (
	"strings"
	"testing"
)

var secret = []byte(strings.Repeat("k", 40))

func signed(t *testing.T) (Receipt, string) {
	t.Helper()
	k, err := NewKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	r := k.Sign(Receipt{Repo: "acme/app", Issue: 7, Invocation: "run-1", Login: "coder", Calls: 2, Tokens: 1200, Input: 1000, Output: 200, Issued: 1790000000})
	return r, k.Public()
}

func TestVerify(t *testing.T) {
	r, pub := signed(t)
	want := For{Repo: "acme/app", Issue: 7, Invocation: "run-1"}
	if err := Verify(&r, pub, want); err != nil {
		t.Fatalf("a receipt the meter signed does not verify: %v", err)
	}
	other, _ := NewKey([]byte(strings.Repeat("o", 40)))
	for _, tt := range []struct {
		name string
		edit func(r *Receipt)
		want For
		key  string
		says string
	}{
		{"total lowered", func(r *Receipt) { r.Tokens = 10 }, want, pub, "does not verify"},
		{"another issue", func(*Receipt) {}, For{Repo: "acme/app", Issue: 8, Invocation: "run-1"}, pub, "issue #7, not #8"},
		{"another invocation", func(*Receipt) {}, For{Repo: "acme/app", Issue: 7, Invocation: "run-2"}, pub, `invocation "run-1", not "run-2"`},
		{"another repository", func(*Receipt) {}, For{Repo: "acme/web", Issue: 7, Invocation: "run-1"}, pub, "repository acme/app, not acme/web"},
		{"another key", func(*Receipt) {}, want, other.Public(), "not meter-public-key's"},
		{"no signature", func(r *Receipt) { r.Sig = "" }, want, pub, "does not verify"},
		{"bad public key", func(*Receipt) {}, want, "ed25519:AAAA", "meter-public-key: expected"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := r
			tt.edit(&c)
			err := Verify(&c, tt.key, tt.want)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Verify = %v, want an error saying %q", err, tt.says)
			}
		})
	}
}

func TestWeakKey(t *testing.T) {
	if _, err := NewKey([]byte("short")); err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Errorf("NewKey(short) = %v", err)
	}
}
