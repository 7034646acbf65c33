package ledger

import (
	"fmt"
	"strings"
)

// MinKeyBits: the public key allows offline guessing; a weak key forges
// every record (docs/contract.md#4b-the-trusted-ledger).
const MinKeyBits = 256

// KeyRule says, for messages, what a ledger-key must be.
const KeyRule = "at least 256 bits: 64 hexadecimal digits, or 43 characters of base64 (44 with its padding), as gns-guard keygen prints it"

// KeyBits measures a ledger-key secret by its text, trimmed: 4 bits a
// digit when every character is a hexadecimal digit; else 6 bits a
// character when every character is of base64's alphabets (standard or
// URL, padding "=" at the end counting nothing); else 0, since a text of
// any other kind (a pass phrase) cannot be measured.
func KeyBits(secret []byte) int {
	s := strings.TrimSpace(string(secret))
	if s == "" {
		return 0
	}
	if strings.Trim(s, "0123456789abcdefABCDEF") == "" {
		return 4 * len(s)
	}
	data := strings.TrimRight(s, "=")
	for _, c := range data {
		if !isBase64(c) {
			return 0
		}
	}
	return 6 * len(data)
}

// isBase64 accepts the standard and the URL alphabets.
func isBase64(c rune) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// CheckKey reports strength (never the key) and the fix.
func CheckKey(secret []byte) error {
	bits := KeyBits(secret)
	if bits >= MinKeyBits {
		return nil
	}
	measured := fmt.Sprintf("it measures %d bits", bits)
	if bits == 0 {
		measured = "it is neither hexadecimal nor base64, so its strength cannot be measured"
	}
	return fmt.Errorf("the key is too weak: a ledger-key must hold %s; %s. Make one with gns-guard keygen", KeyRule, measured)
}
