package secrets

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// MinLength: shorter values occur in ordinary text; tokens and keys are
// longer.
const MinLength = 8

// Secret is a value and its message name ("the token input").
type Secret struct {
	Name, Value string
}

// form is one way a secret may be written.
type form struct {
	encoding, text string
}

// entry is a secret and its forms.
type entry struct {
	name  string
	forms []form
}

// Set's zero value holds none.
type Set struct{ list []entry }

// New drops empty and short values; a repeat keeps its first name.
func New(ss ...Secret) Set {
	var s Set
	s.Add(ss...)
	return s
}

// Add holds more secrets (see New).
func (s *Set) Add(ss ...Secret) {
	for _, sec := range ss {
		v := strings.TrimSpace(sec.Value)
		if len(v) < MinLength || s.holds(v) {
			continue
		}
		s.list = append(s.list, entry{name: sec.Name, forms: forms(v)})
	}
}

func (s *Set) holds(v string) bool {
	for _, e := range s.list {
		if e.forms[0].text == v {
			return true
		}
	}
	return false
}

// Len is the number of secrets held.
func (s Set) Len() int { return len(s.list) }

// forms are the texts a secret v shows as: itself, its hex (either case),
// its URL escapes, and its base64 in the standard and URL alphabets at
// each of the three alignments it can have inside a longer encoded text
// (the characters its own bytes alone decide).
func forms(v string) []form {
	out := []form{{"as it is", v}}
	add := func(enc, text string) {
		if len(text) >= MinLength && text != v {
			out = append(out, form{enc, text})
		}
	}
	h := hex.EncodeToString([]byte(v))
	add("hex", h)
	add("hex", strings.ToUpper(h))
	add("URL-escaped", escape(v))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for k := range 3 {
			text := enc.EncodeToString(append(make([]byte, k), v...))
			from, to := 4*((k+2)/3), 4*((k+len(v))/3)
			if to > from {
				add("base64", text[from:to])
			}
		}
	}
	return out
}

// Found is a secret's name and how text wrote it.
type Found struct {
	Name, Encoding string
}

// String says it for a message: "GITEA_TOKEN (as base64)".
func (f Found) String() string { return fmt.Sprintf("%s (%s)", f.Name, f.Encoding) }

// Find returns the first held secret text carries, in any form.
func (s Set) Find(text string) (Found, bool) {
	for _, e := range s.list {
		for _, f := range e.forms {
			if strings.Contains(text, f.text) {
				return Found{Name: e.name, Encoding: f.encoding}, true
			}
		}
	}
	return Found{}, false
}

// escape percent-encodes all but RFC 3986 unreserved bytes.
func escape(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
