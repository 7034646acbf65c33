package ledger

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
)

// Governance labels are pinned by id (docs/ledger.md#pinned-labels): their
// ids are kept, signed, in one Actions variable, PinsName, which only the
// owner may write. The runner hands it to the step, so a check costs no
// request. A governance name under another id is a forgery; a pinned label
// renamed is tampering.

// PinsName is the repository variable that holds the pinned labels.
const PinsName = "GNS_GUARD_LABELS"

// Pins are the repository's pinned governance labels: id by name.
type Pins struct {
	// Repo is the repository's id: others' pins do not count.
	Repo   int64            `json:"repo"`
	Labels map[string]int64 `json:"labels"`
}

// PinState is what a run knows of the pins.
type PinState struct {
	// Known: handed over by the runner, or read with admin-token.
	Known bool
	// Text is the variable's value ("" when there is none).
	Text string
}

var pinsText = regexp.MustCompile(`^gns-guard:labels v1 (\{[^\n]*\}) kid=([0-9a-f]{16}|-) sig=([0-9a-f]{128}|unsigned)$`)

func pinsMessage(data []byte) []byte {
	return append([]byte("gns-guard labels v1\n"), data...)
}

// EncodePins signs with ledger-key's Ed25519 key when set.
func EncodePins(p Pins, secret []byte) string {
	if p.Labels == nil {
		p.Labels = map[string]int64{}
	}
	data, _ := json.Marshal(p) // maps of plain values always marshal, keys sorted
	kid, sig := signWith(secret, pinsMessage(data))
	return fmt.Sprintf("gns-guard:labels v1 %s kid=%s sig=%s", data, kid, sig)
}

// ReadPins reads and verifies the pins of repository repo (0: not known)
// from the variable's text: none ("") is nil, with no problem. A problem
// says in one sentence why the text is not pins the guard wrote.
func ReadPins(text string, repo int64, keys Keys) (*Pins, string) {
	if text == "" {
		return nil, ""
	}
	m := pinsText.FindStringSubmatch(text)
	if m == nil {
		return nil, fmt.Sprintf("the repository variable %s does not hold label pins the guard wrote: someone with the owner's rights changed it", PinsName)
	}
	if problem := verifyVariable("the label pins", PinsName, m[2], m[3], pinsMessage([]byte(m[1])), keys); problem != "" {
		return nil, problem
	}
	var p Pins
	if err := json.Unmarshal([]byte(m[1]), &p); err != nil || p.Labels == nil {
		return nil, fmt.Sprintf("the label pins in the repository variable %s cannot be read: someone with the owner's rights changed it", PinsName)
	}
	if repo != 0 && p.Repo != 0 && p.Repo != repo {
		return nil, fmt.Sprintf("the label pins in the repository variable %s belong to another repository: someone with the owner's "+
			"rights copied it", PinsName)
	}
	return &p, ""
}

// NameOf is "" when id is not pinned.
func (p *Pins) NameOf(id int64) string {
	for _, name := range slices.Sorted(maps.Keys(p.Labels)) {
		if p.Labels[name] == id {
			return name
		}
	}
	return ""
}
