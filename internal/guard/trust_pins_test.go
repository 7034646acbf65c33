package guard

import (
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// pinned is trusted() with the governance labels pinned: cascade::depth-2
// as id 1, size::medium as id 2.
func pinned(t *testing.T, labels ...issues.Label) Input {
	t.Helper()
	in := trusted(t, 4)
	in.Issue.Labels = labels
	pins := ledger.Pins{Labels: map[string]int64{"cascade::depth-2": 1, "size::medium": 2, "size::large": 3}}
	in.Pins = ledger.PinState{Known: true, Text: ledger.EncodePins(pins, testKey)}
	return in
}

// A governance name under an id the pins do not give it is a forgery: it
// counts for nothing and goes; a pinned label renamed is tampering, judged
// under its pinned name.
func TestPinnedLabels(t *testing.T) {
	p := Decide(pinned(t, issues.Label{ID: 1, Name: "cascade::depth-2"}))
	if len(p.Violations) != 0 {
		t.Fatalf("pinned labels: %v", ruleIDs(p))
	}
	p = Decide(pinned(t, issues.Label{ID: 1, Name: "cascade::depth-2"}, issues.Label{ID: 9, Name: "size::large"}))
	if msg := tamperMessage(t, p); !strings.Contains(msg, `"size::large" (id 9)`) || !strings.Contains(msg, "forgery") || p.Numbers.TaskSize == "large" ||
		!slices.ContainsFunc(p.RemoveLabels, func(l issues.Label) bool { return l.ID == 9 }) {
		t.Errorf("a forged size::large: %s, size %s, removed %v", msg, p.Numbers.TaskSize, p.RemoveLabels)
	}
	p = Decide(pinned(t, issues.Label{ID: 1, Name: "cascade::depth-n"}))
	if msg := tamperMessage(t, p); !strings.Contains(msg, `pinned governance label "cascade::depth-2" (id 1) was renamed to "cascade::depth-n"`) || p.Numbers.MaxDepth != 2 {
		t.Errorf("a pinned label renamed: %s, max depth %d", msg, p.Numbers.MaxDepth)
	}
}
