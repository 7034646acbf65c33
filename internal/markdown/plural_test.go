package markdown

import "testing"

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 entries", 1: "1 entry", 2: "2 entries"} {
		if got := Plural(n, "entry"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
	if got := Plural(2, "part"); got != "2 parts" {
		t.Errorf("Plural(2, part) = %q", got)
	}
}
