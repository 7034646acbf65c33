package ledger

import (
	"strings"
	"testing"
)

// A ledger-key is measured by its text: hex 4 bits a digit, base64 6 bits
// a character, anything else not at all.
func TestKeyBits(t *testing.T) {
	for _, c := range []struct {
		key  string
		bits int
		ok   bool
	}{
		{"abc", 12, false},
		{strings.Repeat("ab", 32), 256, true},                          // keygen's 64 hex digits
		{strings.Repeat("ab", 31) + "a", 252, false},                   // one digit short
		{"  " + strings.Repeat("0f", 32) + "\n", 256, true},            // trimmed
		{strings.Repeat("Zz9+", 10) + "Qw8=", 258, true},               // openssl rand -base64 32
		{strings.Repeat("Zz9_", 10) + "Qw8", 258, true},                // URL alphabet, unpadded
		{strings.Repeat("Zz9-", 10) + "Q=", 246, false},                // 41 characters
		{strings.Repeat("correct horse battery staple ", 4), 0, false}, // a pass phrase
		{"", 0, false},
	} {
		if got := KeyBits([]byte(c.key)); got != c.bits {
			t.Errorf("KeyBits(%q) = %d, want %d", c.key, got, c.bits)
		}
		err := CheckKey([]byte(c.key))
		if (err == nil) != c.ok {
			t.Errorf("CheckKey(%q) = %v, want ok %v", c.key, err, c.ok)
		}
		if err != nil && (!strings.Contains(err.Error(), "256 bits") || !strings.Contains(err.Error(), "gns-guard keygen") || c.key != "" && strings.Contains(err.Error(), strings.TrimSpace(c.key))) {
			t.Errorf("CheckKey(%q): the message must name the minimum and keygen, never the key: %v", c.key, err)
		}
	}
}
