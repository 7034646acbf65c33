package ledger

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// The grant list reads back as written, only for its repository, and
// only as the guard signed it.
func TestGrantsRoundTrip(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	keys, err := NewKeys(secret, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	g := Grants{Repo: 3, Grants: []Grant{{Issue: 4, Tokens: 50000, Time: 1700000000}}}
	text := EncodeGrants(g, secret)
	if !strings.Contains(text, `[[4,50000,1700000000]]`) {
		t.Errorf("a grant is not written as [issue, tokens, time]: %s", text)
	}
	got, problem := ReadGrants(text, 3, keys)
	if problem != "" || !slices.Equal(got.Grants, g.Grants) {
		t.Fatalf("read back: %+v %q", got, problem)
	}
	if _, problem := ReadGrants(text, 8, keys); !strings.Contains(problem, "another repository") {
		t.Errorf("another repository's list: %q", problem)
	}
	edited := strings.Replace(text, "50000", "5000", 1)
	if _, problem := ReadGrants(edited, 3, keys); !strings.Contains(problem, "does not verify") {
		t.Errorf("an edited list: %q", problem)
	}
	if _, problem := ReadGrants(EncodeGrants(g, nil), 3, keys); !strings.Contains(problem, "not signed") {
		t.Errorf("an unsigned list under a key: %q", problem)
	}
	if got, problem := ReadGrants("", 3, keys); problem != "" || len(got.Grants) != 0 {
		t.Errorf("no variable is an empty list: %+v %q", got, problem)
	}
}

// Merging keeps what another run wrote, adds what is missing once, and
// drops what left the window.
func TestMergeGrants(t *testing.T) {
	now := time.Unix(1700000000, 0)
	old := Grant{Issue: 1, Tokens: 9, Time: now.Add(-8 * 24 * time.Hour).Unix()}
	theirs := Grant{Issue: 2, Tokens: 20, Time: now.Unix() - 5}
	mine := Grant{Issue: 3, Tokens: 30, Time: now.Unix()}
	got := MergeGrants(Grants{Repo: 1, Grants: []Grant{old, theirs}}, []Grant{mine, theirs}, now.Add(-7*24*time.Hour))
	if !slices.Equal(got.Grants, []Grant{theirs, mine}) || got.Repo != 1 {
		t.Errorf("merged: %+v", got)
	}
	if Sum(got.Grants) != 50 || Sum([]Grant{{Tokens: 1 << 62}, {Tokens: 1 << 62}, {Tokens: 1 << 62}}) < 1<<62 {
		t.Error("Sum does not add, or wraps")
	}
}

// What a rotated-out key signed is signed anew, whatever the variable;
// what the current key signed, an unsigned text without a key, and no
// text are left alone.
func TestSignAnew(t *testing.T) {
	old := []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	cur := []byte("6cef831177da3c70b1c4a54e5810b42c7a390b699378f5a4bf621b924da9d569")
	both, err := NewKeys(cur, old, "")
	if err != nil {
		t.Fatal(err)
	}
	pins := Pins{Repo: 3, Labels: map[string]int64{"cascade::depth-2": 7}}
	grants := Grants{Repo: 3, Grants: []Grant{{Issue: 4, Tokens: 50000, Time: 1700000000}}}
	for _, c := range []struct {
		name string
		text string
		keys Keys
		want bool
	}{
		{"pins the old key signed", EncodePins(pins, old), both, true},
		{"grants the old key signed", EncodeGrants(grants, old), both, true},
		{"an anchor the old key signed", EncodeAnchor(Anchor{Repo: 3, Issue: 4, Seq: 1}, old), both, true},
		{"pins the current key signed", EncodePins(pins, cur), both, false},
		{"no text", "", both, false},
		{"no signing key", EncodePins(pins, nil), Keys{}, false},
	} {
		if got := SignAnew(c.text, c.keys); got != c.want {
			t.Errorf("%s: SignAnew = %v, want %v (%q)", c.name, got, c.want, c.text)
		}
	}
	if _, problem := ReadPins(EncodePins(pins, old), 3, both); problem != "" {
		t.Errorf("pins the previous key signed do not verify while it is held: %s", problem)
	}
}
