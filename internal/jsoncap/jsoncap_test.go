package jsoncap_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gns-guard/gns-guard/internal/jsoncap"
)

var errCut = errors.New("cut")

func isCut(err error) bool { return errors.Is(err, errCut) }

// cutReader gives the first n bytes of data, then errCut.
func cutReader(data []byte, n int) io.Reader {
	return io.MultiReader(bytes.NewReader(data[:n]), iotest.ErrReader(errCut))
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

const sample = `[
  {"id": 1, "type": "comment", "user": {"login": "ann"}, "body": "short \u003cb\u003e \"quoted\" \\ é \ud83d\ude00", "n": -1.5e3, "ok": true, "x": null, "e": [], "o": {}},
  {"id": 2, "type": "label", "label": {"id": 7, "name": "a/b"}, "body": "1"},
  {"id": 3, "type": "comment", "user": {"login": "bob"}, "body": "` + "0123456789abcdefghij" + `", "created_at": "2026-01-02T03:04:05Z"}
]`

// With a large limit the copy decodes to the same value; every top-level
// element is whole.
func TestCopyKeepsShortStrings(t *testing.T) {
	res, err := jsoncap.Copy(strings.NewReader(sample), 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(decode(t, res.JSON), decode(t, []byte(sample))) {
		t.Errorf("copy differs:\n%s", res.JSON)
	}
	if len(res.Long) != 0 || res.Cut != nil || !res.Whole["0"] || !res.Whole["2"] || len(res.Whole) != 3 {
		t.Errorf("long %v, whole %v, cut %v", res.Long, res.Whole, res.Cut)
	}
	// Read a byte at a time, the same.
	res2, err := jsoncap.Copy(iotest.OneByteReader(strings.NewReader(sample)), 1<<20, nil)
	if err != nil || !bytes.Equal(res2.JSON, res.JSON) {
		t.Errorf("one byte at a time: %s, %v", res2.JSON, err)
	}
}

// A string over the limit is left out, with its decoded length: escapes
// count as the bytes they stand for.
func TestCopyLeavesOutLongStrings(t *testing.T) {
	res, err := jsoncap.Copy(strings.NewReader(sample), 19, nil)
	if err != nil {
		t.Fatal(err)
	}
	// "short <b> \"quoted\" \\ é 😀": 6+3+1+8+1+1+1+2+1+4 bytes.
	want := map[string]int64{"0/body": int64(len("short <b> \"quoted\" \\ é \U0001F600")), "2/body": 20, "2/created_at": 20}
	if !reflect.DeepEqual(res.Long, want) {
		t.Errorf("long %v, want %v", res.Long, want)
	}
	var got []struct {
		ID   int64  `json:"id"`
		Body string `json:"body"`
	}
	if err := json.Unmarshal(res.JSON, &got); err != nil || len(got) != 3 || got[0].Body != "" || got[1].Body != "1" || got[2].Body != "" || got[2].ID != 3 {
		t.Errorf("%+v %v", got, err)
	}
	// A string of exactly the limit is kept.
	res, err = jsoncap.Copy(strings.NewReader(sample), 20, nil)
	if err != nil || res.Long["2/body"] != 0 || !strings.Contains(string(res.JSON), "0123456789abcdefghij") {
		t.Errorf("at the limit: %s %v %v", res.JSON, res.Long, err)
	}
}

// Cut at any byte, the copy is valid JSON holding every element read
// whole, and the elements before the cut are marked whole.
func TestCopyCutAnywhere(t *testing.T) {
	whole := decode(t, []byte(sample)).([]any)
	for n := 0; n < len(sample); n++ {
		res, err := jsoncap.Copy(cutReader([]byte(sample), n), 1<<20, isCut)
		if err != nil {
			t.Fatalf("cut at %d: %v", n, err)
		}
		if res.Cut == nil {
			t.Fatalf("cut at %d: not reported", n)
		}
		v := decode(t, res.JSON)
		arr, _ := v.([]any)
		for i := range whole {
			if res.Whole[string(rune('0'+i))] {
				if i >= len(arr) || !reflect.DeepEqual(arr[i], whole[i]) {
					t.Fatalf("cut at %d: element %d marked whole but differs: %s", n, i, res.JSON)
				}
			}
		}
	}
}

// The id, type and author before a body cut off are kept; the body is
// left out with the length read of it.
func TestCopyCutInABody(t *testing.T) {
	big := `[{"id":1,"type":"comment","body":"a"},{"id":9,"type":"comment","user":{"login":"eve"},"body":"` + strings.Repeat(`\u003c`, 1000) + `","created_at":"2026-01-01T00:00:00Z"}]`
	cutAt := strings.Index(big, `\u003c`) + 600 // 100 characters in
	res, err := jsoncap.Copy(cutReader([]byte(big), cutAt), 50, isCut)
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		ID   int64 `json:"id"`
		User struct {
			Login string `json:"login"`
		} `json:"user"`
		Body string `json:"body"`
	}
	if err := json.Unmarshal(res.JSON, &got); err != nil {
		t.Fatalf("%s: %v", res.JSON, err)
	}
	if len(got) != 2 || got[1].ID != 9 || got[1].User.Login != "eve" || got[1].Body != "" || res.Long["1/body"] != 100 || !res.Whole["0"] || res.Whole["1"] {
		t.Errorf("%+v long %v whole %v", got, res.Long, res.Whole)
	}
}

// Errors other than the cut are errors; so is input that is not JSON.
func TestCopyErrors(t *testing.T) {
	for _, in := range []string{"", "{", `{"a":1`, `[1,2`, `"abc`, `{"a" 1}`, `[1 2]`, `{"a":tru}`, `<html>`, `{"a":"\x"}`, strings.Repeat("[", 100) + strings.Repeat("]", 100)} {
		if res, err := jsoncap.Copy(strings.NewReader(in), 10, isCut); err == nil {
			t.Errorf("%q: no error, copy %s", in, res.JSON)
		}
	}
	if _, err := jsoncap.Copy(strings.NewReader(`{"a":1`), 10, isCut); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated: %v", err)
	}
	if _, err := jsoncap.Copy(strings.NewReader(`{"a":tru}`), 10, isCut); !errors.Is(err, jsoncap.ErrSyntax) {
		t.Errorf("bad literal: %v", err)
	}
	other := errors.New("connection reset")
	if _, err := jsoncap.Copy(io.MultiReader(strings.NewReader(`{"a":"xx`), iotest.ErrReader(other)), 10, isCut); !errors.Is(err, other) {
		t.Errorf("another read error: %v", err)
	}
}

// A long string costs no memory beyond the limit: 64 MiB of it through a
// limit of 1 KiB.
func TestCopyLongStringStreams(t *testing.T) {
	const n = 64 << 20
	r := io.MultiReader(strings.NewReader(`{"body":"`), io.LimitReader(repeatReader('x'), n), strings.NewReader(`","number":5}`))
	res, err := jsoncap.Copy(r, 1<<10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Long["body"] != n || string(res.JSON) != `{"body":"","number":5}` || !res.Whole["number"] || !res.Whole["body"] {
		t.Errorf("%s %v %v", res.JSON, res.Long, res.Whole)
	}
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}
