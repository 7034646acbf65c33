package receipt

import (
	"strings"
	"testing"
)

// TestAttestation: the gate's word verifies on the comment it signed, for
// its repository and issue only, and not once a byte of the comment moved.
func TestAttestation(t *testing.T) {
	k, err := NewKey([]byte(strings.Repeat("gate-key-", 5)))
	if err != nil {
		t.Fatal(err)
	}
	comment := "## 🔄 coder | phase:build | depth:1\n\n**Invocation**: inv-1\n\n---\n<!-- GNS_EVENT {\"agent\":\"coder\"} -->\n"
	signed := k.Attest(Attestation{Repo: "org/app", Issue: 7, Login: "bot-coder", Agent: "coder", Invocation: "inv-1"}, comment)
	if !strings.HasSuffix(signed, "<!-- GNS_EVENT {\"agent\":\"coder\"} -->\n") {
		t.Fatalf("the footer is no longer last:\n%s", signed)
	}
	a, err := VerifyAttestation(signed, k.Public(), "ORG/app", 7)
	if err != nil || a.Login != "bot-coder" || a.Agent != "coder" {
		t.Fatalf("VerifyAttestation = %+v, %v; want bot-coder as coder", a, err)
	}
	other, _ := NewKey([]byte(strings.Repeat("other-key-", 5)))
	for name, tc := range map[string]struct {
		comment, key, repo string
		issue              int64
		want               string
	}{
		"edited":        {strings.Replace(signed, "inv-1\n", "inv-2\n", 1), k.Public(), "org/app", 7, "edited after the gate wrote it"},
		"other issue":   {signed, k.Public(), "org/app", 8, "not #8"},
		"other repo":    {signed, k.Public(), "org/web", 7, "not org/web"},
		"other key":     {signed, other.Public(), "org/app", 7, "not meter-public-key's"},
		"none":          {comment, k.Public(), "org/app", 7, "no attestation"},
		"login changed": {strings.Replace(signed, `"login":"bot-coder"`, `"login":"mallory"`, 1), k.Public(), "org/app", 7, "does not verify"},
		"two lines": {strings.Replace(signed, "---\n", "---\n"+signed[strings.Index(signed, "<!-- gns-guard:gate"):strings.Index(signed, "<!-- GNS_EVENT")], 1),
			k.Public(), "org/app", 7, "more than one"},
	} {
		if _, err := VerifyAttestation(tc.comment, tc.key, tc.repo, tc.issue); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
}
