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
