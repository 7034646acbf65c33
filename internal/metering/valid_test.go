package metering

import (
	"encoding/json"
	"strings"
	"testing"
)

var validCases = []string{
	`{}`, `[]`, `{"a":1}`, ` {"a" : [1, 2.5e-3, -0, true, false, null, "x\u00e9\n"]} `, `"s"`, `0`, `-1.0E+2`,
	`{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`, `{,}`, `[,1]`, `01`, `1.`, `.5`, `-`, `1e`, `1e+`, `+1`, `tru`, `truex`, `nul`,
	`"\x"`, `"\u12"`, `"\u12G4"`, "\"a\x01\"", "\"\x7f\xff\"", `"`, `{"a":1}}`, `{"a":1} {}`, `[1 2]`, `{"a" 1}`, `{1:2}`,
	"\t[\r\n]\n", ``, ` `, `{"a":[{"b":[]}]}`, `[[[[]]]]`, `[[[[]]]`, `{"a":"b"`, `"\/\b\f\r\t\\\""`,
	strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth),
	strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
	strings.Repeat(`{"a":`, maxDepth) + "1" + strings.Repeat("}", maxDepth),
}

// validJSON says what json.Valid says.
func TestValidJSON(t *testing.T) {
	for _, c := range validCases {
		if got, want := validJSON([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("%.60q: %v, json.Valid says %v", c, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, c := range validCases[:len(validCases)-3] {
		f.Add([]byte(c))
	}
	f.Add(chatStreamBurst())
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("%q: %v, json.Valid says %v", b, got, want)
		}
	})
}

// BenchmarkValidJSON is the check of a long request body, against
// encoding/json's.
func BenchmarkValidJSON(b *testing.B) {
	var msgs []map[string]string
	for i := range 40 {
		msgs = append(msgs, map[string]string{"role": "user", "content": strings.Repeat("The limiter keeps the gateway's callers under quota; \"see\" config.\n", 30) + string(rune('a'+i%26))})
	}
	body, _ := json.Marshal(map[string]any{"model": "gpt-4o", "max_tokens": 20, "messages": msgs})
	b.Run("validJSON", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !validJSON(body) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !json.Valid(body) {
				b.Fatal("invalid")
			}
		}
	})
}
