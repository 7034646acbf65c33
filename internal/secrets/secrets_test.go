package secrets

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
)

const token = "4e1781244fd55747e1565d53b7818bf1d42bfb67"

// A secret is found as it is and in each encoding, alone or inside a
// longer text that was encoded whole (a .env file base64-encoded).
func TestFindEveryEncoding(t *testing.T) {
	s := New(Secret{"GITEA_TOKEN", token}, Secret{"short", "abc"}, Secret{"empty", ""})
	if s.Len() != 1 {
		t.Fatalf("held %d secrets, want the token only", s.Len())
	}
	env := "HOME=/home/agent\nGITEA_TOKEN=" + token + "\nEDITOR=vi\n"
	texts := map[string]string{
		"as it is":    "see " + token + " here",
		"hex":         hex.EncodeToString([]byte(env)),
		"HEX":         strings.ToUpper(hex.EncodeToString([]byte(token))),
		"url":         url.QueryEscape("t=" + token + "/\u00e9"),
		"base64 env":  base64.StdEncoding.EncodeToString([]byte(env)),
		"base64 x":    base64.StdEncoding.EncodeToString([]byte("x" + env)),
		"base64 xy":   base64.RawURLEncoding.EncodeToString([]byte("xy" + env)),
		"base64 bare": base64.StdEncoding.EncodeToString([]byte(token)),
	}
	for name, text := range texts {
		f, ok := s.Find(text)
		if !ok || f.Name != "GITEA_TOKEN" {
			t.Errorf("%s: not found in %q", name, text)
		}
	}
	if f, ok := s.Find("an ordinary comment about tokens and keys: 4e1781244fd5"); ok {
		t.Errorf("found %v in a text without the secret", f)
	}
}
